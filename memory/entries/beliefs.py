"""Beliefs and their supporters (seed 003): writing a belief with the entries that support
it, and demoting a belief to a ``candidate`` when one of its supporters is deleted (by a
person, a forget or a clear: every door deletes rows, and this listens to the deletion
itself)."""

from __future__ import annotations

from django.db.models import F
from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.utils import timezone

from memory.models import BeliefSupport, EntryStatus, MemoryEntry


def support(tenant, belief: MemoryEntry, supporter_ids) -> int:
    """Record that ``supporter_ids`` (entries of the belief's owner) support ``belief``;
    how many supports are new."""
    owned = set(
        MemoryEntry.objects.filter(
            tenant=tenant, player_id=belief.player_id, pk__in=list(supporter_ids)
        ).values_list("pk", flat=True)
    )
    known = set(BeliefSupport.objects.filter(belief=belief).values_list("supporter_id", flat=True))
    rows = [BeliefSupport(tenant=tenant, belief=belief, supporter_id=pk) for pk in owned - known]
    BeliefSupport.objects.bulk_create(rows)
    return len(rows)


def supporters_of(belief: MemoryEntry) -> list[str]:
    return [str(pk) for pk in belief.supports.values_list("supporter_id", flat=True)]


@receiver(pre_delete, sender=MemoryEntry, dispatch_uid="memory.beliefs.demote")
def _demote(sender, instance: MemoryEntry, **_) -> None:
    """A supporter is going: the active beliefs it supports become candidates again."""
    MemoryEntry.objects.filter(
        status=EntryStatus.ACTIVE, supports__supporter_id=instance.pk
    ).exclude(pk=instance.pk).update(
        status=EntryStatus.CANDIDATE, version=F("version") + 1, updated_at=timezone.now()
    )
