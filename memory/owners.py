"""An owner's two memory counters (``MemoryOwnerState``): ``revision`` moves on any change of
the player's memory, ``epoch`` also on a change by a person or a forgetting (manual edit,
delete, clear). A background job reads :func:`state` when it starts and writes its result
only if the epoch is still the same (:func:`epoch_is`), so a late result cannot bring back
what a person changed or forgot meanwhile. Every write service of the memory model calls
:func:`touch`, in the same transaction as its change."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F

from console.models import Player
from memory.models import MemoryOwnerState


def lock(player_id) -> None:
    """Serialise one player's memory writes (adds under a cap, handoffs) until the
    transaction ends: the player's row is locked."""
    list(Player.objects.select_for_update().filter(pk=player_id).values_list("pk"))


def touch(tenant, player_id, *, epoch: bool = False) -> None:
    """One more revision of the player's memory (and one more epoch with ``epoch``); none
    for a character's canon (no player)."""
    if player_id is None:
        return
    changes = {"revision": F("revision") + 1}
    if epoch:
        changes["epoch"] = F("epoch") + 1
    rows = MemoryOwnerState.objects.filter(tenant=tenant, player_id=player_id)
    if rows.update(**changes):
        return
    try:
        with transaction.atomic():
            MemoryOwnerState.objects.create(
                tenant=tenant, player_id=player_id, revision=1, epoch=int(epoch)
            )
    except IntegrityError:  # another writer created the row first
        rows.update(**changes)


def state(tenant, player_id) -> tuple[int, int]:
    """(revision, epoch) of the player's memory; (0, 0) before its first change."""
    found = (
        MemoryOwnerState.objects.filter(tenant=tenant, player_id=player_id)
        .values_list("revision", "epoch")
        .first()
    )
    return found or (0, 0)


def epoch_is(tenant, player_id, epoch: int) -> bool:
    """Whether nobody changed or forgot the player's memory since ``epoch`` was read. Call
    it inside the transaction that writes: it locks the counters' row until that ends, so
    a forgetting cannot slip in between the check and the write."""
    found = (
        MemoryOwnerState.objects.select_for_update()
        .filter(tenant=tenant, player_id=player_id)
        .values_list("epoch", flat=True)
        .first()
    )
    return (found or 0) == epoch
