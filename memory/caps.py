"""The one rule of seed 004's caps: at the cap, a new row takes the place of the oldest
recyclable one (entries: not active and not pinned; handoffs: closed), else it is refused."""

from __future__ import annotations

from django.db.models import QuerySet

from console.failures import DomainError


def make_room(owned: QuerySet, recyclable: QuerySet, cap: int, full: DomainError) -> None:
    """Below ``cap`` rows in ``owned``: nothing. At it: delete the least recently updated of
    ``recyclable`` (a subset of ``owned``), or raise ``full``. Callers hold the owner's lock."""
    if owned.count() < cap:
        return
    spare = recyclable.order_by("updated_at", "id").values_list("pk", flat=True).first()
    if spare is None:
        raise full
    owned.model.objects.filter(pk=spare).delete()
