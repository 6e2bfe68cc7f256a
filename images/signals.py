"""The announcement of a chat image slot's change of state, for whoever shows it.

This app never imports the socket layer (capabilities stand alone); the runtime connects a
receiver at start-up and turns each announcement into the conversation's socket event
(``image.ready``, ``image.blocked``, ``image.failed``). Sent once the change has committed,
once per change, with ``slot`` (an ``images.models.ImageSlot`` as stored) and ``status``.
"""

from __future__ import annotations

from django.db import transaction
from django.dispatch import Signal

slot_changed = Signal()
"""``(slot, status)``: a slot was reserved (``pending``) or reached its final state."""


def announce(slot) -> None:
    """Send :data:`slot_changed` for ``slot`` after the current transaction commits (now, in
    autocommit). A receiver that fails is logged by Django's ``send_robust`` and never undoes
    the change."""
    status = slot.status

    def send() -> None:
        slot_changed.send_robust(sender=type(slot), slot=slot, status=status)

    transaction.on_commit(send)
