"""Chat image slots: a picture of a stored assistant message, from ``pending`` to its end.

:func:`reserve_slot` writes the slot ``pending`` (before any backend call) and queues
``images.draw_slot``; :func:`draw_slot` (that task's body) calls the backend once, checks
the bytes and the evidence, stores the file and a thumbnail, and moves the slot, by
compare-and-set from ``pending``, to ``ready``, ``blocked`` or ``failed`` with a code.
:func:`sweep_slots` ends every slot still pending past its deadline ``failed: timed_out``,
so a slot always reaches a final state. Each change is announced (``images.signals``).
Deleting slots (by messages, conversation, tenant) deletes their files too.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from console import task_send
from console.scoping import canonical_uuid
from images import files
from images.engine.request import MAX_PROMPT_BYTES, integer_problem, refusal, text_problem
from images.errors import Conflict, ImagesError, invalid
from images.models import ImageConfig, ImageSlot, SlotStatus
from images.providers import Ask
from images.services.drawing import draw
from images.signals import announce

log = logging.getLogger(__name__)
MAX_INDEX = 63
TIMED_OUT = "timed_out"
QUEUE_UNAVAILABLE = "queue_unavailable"


def _uuid(field: str, value) -> uuid.UUID:
    text = canonical_uuid(value)
    if text is None:
        raise invalid("invalid_type", field, f"{field} must be a UUID")
    return uuid.UUID(text)


def reserve_slot(
    tenant,
    conversation_id,
    message_id,
    index: int,
    prompt: str,
    config: ImageConfig,
    *,
    session_id: str = "",
    enqueue: bool = True,
) -> ImageSlot:
    """Write slot ``index`` of assistant message ``message_id`` as ``pending`` and, once
    that commits, queue its drawing. The caller has stored the message. A 422 names a bad
    argument; a 409 ``slot_taken`` when the message already has that slot."""
    problems = [
        p
        for p in (
            text_problem("prompt", prompt, max_bytes=MAX_PROMPT_BYTES),
            integer_problem("index", index, 0, MAX_INDEX),
        )
        if p
    ]
    if problems:
        raise refusal(problems)
    if config.tenant_id != tenant.pk:
        raise invalid("invalid_config", "config", "the image config is another tenant's")
    now = timezone.now()
    slot = ImageSlot(
        tenant=tenant, conversation_id=_uuid("conversation_id", conversation_id),
        message_id=_uuid("message_id", message_id), index=index, config=config, prompt=prompt,
        session_id=str(session_id or "")[:200], width=config.default_width,
        height=config.default_height, moderated=config.moderation_mode != "none",
        deadline_at=now + timedelta(seconds=config.slot_deadline_seconds),
    )  # fmt: skip
    try:
        with transaction.atomic():
            slot.save(force_insert=True)
    except IntegrityError as exc:
        raise Conflict("slot_taken", "this message already has an image at that index",
                       {"field": "index"}) from exc  # fmt: skip
    announce(slot)
    if enqueue:
        transaction.on_commit(lambda: _queue(slot))
    return slot


def _queue(slot: ImageSlot) -> None:
    try:
        task_send.named("images.draw_slot").delay(str(slot.pk))
    except Exception:  # the broker is down: the slot must still end
        log.warning("could not queue image slot %s", slot.pk, exc_info=True)
        _finish(slot, SlotStatus.FAILED, QUEUE_UNAVAILABLE)


def reprompt(slot_id, prompt: str, *, aspect: tuple[int, int] | None = None) -> bool:
    """Set the prompt of a slot not yet attempted (a caller that writes the prompt after
    reserving, e.g. with a model), and with ``aspect`` (width, height ratio) its size: the
    config's longer side kept, the other side to the ratio, multiples of 8. True when it was
    still pending and untried."""
    problem = text_problem("prompt", prompt, max_bytes=MAX_PROMPT_BYTES)
    if problem:
        raise refusal([problem])
    pending = ImageSlot.objects.filter(
        pk=canonical_uuid(slot_id), status=SlotStatus.PENDING, attempted_at__isnull=True
    )
    values: dict = {"prompt": prompt, "updated_at": timezone.now()}
    slot = pending.first()
    if slot is not None and aspect and slot.width and slot.height and min(aspect) > 0:
        longest = max(slot.width, slot.height)
        w, h = aspect
        scale = longest / max(w, h)
        values["width"] = max(8, round(w * scale / 8) * 8)
        values["height"] = max(8, round(h * scale / 8) * 8)
    return bool(pending.update(**values))


def note_prompt(slot_id, choice: dict) -> None:
    """Keep how the slot's prompt was written (the producer's, or the fallback and why)
    beside the backend's evidence."""
    slot = ImageSlot.objects.filter(pk=canonical_uuid(slot_id)).first()
    if slot is not None:
        evidence = {**(slot.evidence or {}), "prompt": choice}
        ImageSlot.objects.filter(pk=slot.pk).update(evidence=evidence)


def draw_slot(slot_id) -> ImageSlot | None:
    """Draw one pending slot, once. A slot already attempted (a task delivered again), no
    longer pending or gone is left as it is."""
    now = timezone.now()
    claimed = ImageSlot.objects.filter(
        pk=canonical_uuid(slot_id), status=SlotStatus.PENDING, attempted_at__isnull=True
    ).update(attempted_at=now)
    if not claimed:
        return None
    slot = ImageSlot.objects.select_related("config").get(pk=slot_id)
    config = slot.config
    if config is None:
        return _finish(slot, SlotStatus.FAILED, "config_deleted")
    ask = Ask(prompt=slot.prompt, count=1, width=slot.width or config.default_width,
              height=slot.height or config.default_height)  # fmt: skip
    try:
        drawn = draw(config, ask)
    except ImagesError as exc:
        return _finish(slot, SlotStatus.FAILED, exc.code)
    image = drawn.images[0]
    slot.evidence = {**(slot.evidence or {}), **(drawn.evidence or {})}  # a caller's notes kept
    if image.verdict is not None and image.verdict.outcome == "blocked":
        return _finish(slot, SlotStatus.BLOCKED, image.code)
    if not image.shown or image.data is None or image.info is None:
        return _finish(slot, SlotStatus.FAILED, image.code or "image_unusable")
    name, thumb = files.store(slot.tenant_id, "slots", image.data, image.info, thumbnail=True)
    slot.file, slot.thumbnail, slot.mime = name, thumb, image.info.mime
    slot.width, slot.height = image.info.width, image.info.height
    finished = _finish(slot, SlotStatus.READY, "")
    if finished.status != SlotStatus.READY or finished.file != name:
        files.delete([name, thumb])  # swept or deleted meanwhile: nothing names the files
    return finished


def _finish(slot: ImageSlot, status: str, code: str) -> ImageSlot:
    """Move ``slot`` from pending to ``status`` (compare-and-set); the slot as stored."""
    now = timezone.now()
    updated = ImageSlot.objects.filter(pk=slot.pk, status=SlotStatus.PENDING).update(
        status=status, code=code[:64], file=slot.file, thumbnail=slot.thumbnail,
        mime=slot.mime, width=slot.width, height=slot.height, evidence=slot.evidence,
        finished_at=now, updated_at=now,
    )  # fmt: skip
    current = ImageSlot.objects.filter(pk=slot.pk).first()
    if current is None:
        slot.file = slot.thumbnail = ""
        return slot
    if updated:
        announce(current)
    return current


def sweep_slots(now=None) -> int:
    """End every slot still pending past its deadline: ``failed: timed_out``."""
    now = now or timezone.now()
    due = list(ImageSlot.objects.filter(status=SlotStatus.PENDING, deadline_at__lt=now)[:500])
    ended = 0
    for slot in due:
        ended += int(_finish(slot, SlotStatus.FAILED, TIMED_OUT).code == TIMED_OUT)
    return ended


def _delete(slots) -> int:
    rows = list(slots.values_list("pk", "file", "thumbnail"))
    names = [name for _pk, file, thumb in rows for name in (file, thumb)]
    count, _ = slots.model.objects.filter(pk__in=[pk for pk, _f, _t in rows]).delete()
    transaction.on_commit(lambda: files.delete(names))
    return count


def delete_slots_of_messages(tenant, message_ids: Iterable) -> int:
    """Delete the slots (and files) of these messages of ``tenant``; how many."""
    ids = [i for i in (canonical_uuid(m) for m in message_ids) if i]
    return _delete(ImageSlot.objects.filter(tenant=tenant, message_id__in=ids))


def delete_slots_of_conversation(tenant, conversation_id) -> int:
    conversation = canonical_uuid(conversation_id)
    if conversation is None:
        return 0
    return _delete(ImageSlot.objects.filter(tenant=tenant, conversation_id=conversation))


def delete_images_of_tenant(tenant) -> int:
    """Every slot and asset job of ``tenant``, with their files (a tenant's deletion)."""
    from images.models import ImageJob

    jobs = ImageJob.objects.filter(tenant=tenant)
    names = [name for job_files in jobs.values_list("files", flat=True) for name in job_files]
    jobs.delete()
    transaction.on_commit(lambda: files.delete(names))
    return _delete(ImageSlot.objects.filter(tenant=tenant))
