"""What images does when something it does not own goes away, connected at start-up.

- A conversation's history changed (``console.history.history_changed``, sent by the
  message store): slots of messages no longer in it are deleted with their files.
- A tenant is deleted: its slots' and jobs' files go too (the rows go by cascade).
"""

from __future__ import annotations

import logging

from django.db.models.signals import pre_delete

from console.history import history_changed, message_texts
from console.models import Tenant
from images.models import ImageSlot
from images.services import slots

log = logging.getLogger(__name__)


def _history_changed(sender, *, tenant, session_id, **_) -> None:
    kept = ImageSlot.objects.filter(tenant=tenant, session_id=session_id)
    ids = {str(i) for i in kept.values_list("message_id", flat=True)}
    if not ids:
        return
    try:
        present = message_texts(session_id, ids)
    except LookupError:
        return
    gone = ids - set(present)
    if gone:
        slots.delete_slots_of_messages(tenant, gone)


def _tenant_deleted(sender, instance, **_) -> None:
    slots.delete_images_of_tenant(instance)


def connect() -> None:
    history_changed.connect(_history_changed, dispatch_uid="images.history")
    pre_delete.connect(_tenant_deleted, sender=Tenant, dispatch_uid="images.tenant")
