"""Chat image slots: pending before the backend, one call, a final state always, files and
thumbnails stored and deleted with their messages, conversation or tenant."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from images import files, selectors
from images.errors import Conflict, Invalid
from images.models import ImageSlot, SlotStatus
from images.services import slots
from images.services.configs import update_image_config
from images.signals import slot_changed

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard():
    events = []

    def receiver(sender, slot, status, **_):
        events.append((str(slot.message_id), slot.index, status, slot.code))

    slot_changed.connect(receiver, dispatch_uid="test-slots")
    yield events
    slot_changed.disconnect(dispatch_uid="test-slots")


def reserve(tenant, config, index=0, message=None, conversation=None, **kwargs):
    return slots.reserve_slot(
        tenant, conversation or uuid.uuid4(), message or uuid.uuid4(), index,
        "Mira hands the guard the key", config, enqueue=False, **kwargs,
    )  # fmt: skip


def test_a_slot_is_pending_before_any_backend_call(
    tenant, images_llm, image_config, heard, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        slot = reserve(tenant, image_config)
    assert slot.status == SlotStatus.PENDING and images_llm.images.requests == []
    assert heard == [(str(slot.message_id), 0, "pending", "")]
    assert slot.deadline_at > timezone.now() + timedelta(seconds=590)


def test_drawing_makes_the_slot_ready_with_a_file_and_a_thumbnail(
    tenant, images_llm, image_config, heard, django_capture_on_commit_callbacks
):
    slot = reserve(tenant, image_config)
    with django_capture_on_commit_callbacks(execute=True):
        done = slots.draw_slot(slot.pk)
    assert done.status == SlotStatus.READY and done.code == ""
    assert files.read(done.file).startswith(b"\x89PNG")
    assert files.read(done.thumbnail).startswith(b"\xff\xd8")
    assert done.file.startswith(f"{tenant.pk}/slots/") and done.moderated
    assert done.evidence["moderation_status"] == "COMPLETED"
    assert heard[-1][2] == "ready"
    (request,) = images_llm.images.requests
    assert (request["n"], request["prompt"]) == (1, "Mira hands the guard the key")


def test_a_task_delivered_twice_calls_the_backend_once(tenant, images_llm, image_config):
    slot = reserve(tenant, image_config)
    assert slots.draw_slot(slot.pk).status == SlotStatus.READY
    assert slots.draw_slot(slot.pk) is None
    assert len(images_llm.images.requests) == 1


@pytest.mark.parametrize(
    ("script", "status", "code"),
    [
        ({"blocked": True}, "blocked", "moderation_blocked"),
        ({"classification": "NSFW"}, "blocked", "moderation_class_not_allowed"),
        ({"evidence": False}, "failed", "moderation_incomplete"),
        ({"status": 500}, "failed", "backend_error"),
        ({"payload": b"GIF89a..."}, "failed", "unsupported_image_type"),
    ],
)
def test_each_outcome_is_a_final_state_with_a_code(tenant, images_llm, image_config, script,
                                                   status, code):  # fmt: skip
    for key, value in script.items():
        setattr(images_llm.images.script, key, value)
    done = slots.draw_slot(reserve(tenant, image_config).pk)
    assert (done.status, done.code, done.file) == (status, code, "")


def test_a_backend_timeout_fails_the_slot(tenant, images_llm, image_config):
    update_image_config(image_config, timeout_seconds=1)
    images_llm.images.script.delay = 3
    done = slots.draw_slot(reserve(tenant, image_config).pk)
    assert (done.status, done.code) == ("failed", "backend_timeout")


def test_the_sweep_ends_slots_pending_past_their_deadline(
    tenant, image_config, heard, django_capture_on_commit_callbacks
):
    late, fresh = reserve(tenant, image_config), reserve(tenant, image_config)
    ImageSlot.objects.filter(pk=late.pk).update(deadline_at=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert slots.sweep_slots() == 1
    late.refresh_from_db()
    fresh.refresh_from_db()
    assert (late.status, late.code) == ("failed", "timed_out") and fresh.status == "pending"
    assert heard[-1] == (str(late.message_id), 0, "failed", "timed_out")
    assert slots.draw_slot(late.pk) is None  # a task arriving after the sweep does nothing


def test_one_slot_per_message_index_and_arguments_checked(tenant, image_config, other_tenant):
    message = uuid.uuid4()
    reserve(tenant, image_config, message=message)
    with pytest.raises(Conflict):
        reserve(tenant, image_config, message=message)
    reserve(tenant, image_config, message=message, index=1)
    for bad in ({"index": 64}, {"index": -1}, {"message": "not-a-uuid"}):
        with pytest.raises(Invalid):
            reserve(tenant, image_config, **bad)
    with pytest.raises(Invalid):
        slots.reserve_slot(tenant, uuid.uuid4(), uuid.uuid4(), 0, "\x00", image_config)
    with pytest.raises(Invalid):
        slots.reserve_slot(other_tenant, uuid.uuid4(), uuid.uuid4(), 0, "x", image_config)


def _ready(tenant, config, **kwargs):
    return slots.draw_slot(reserve(tenant, config, **kwargs).pk)


def test_deleting_by_messages_conversation_and_tenant_deletes_files(
    tenant, image_config, django_capture_on_commit_callbacks
):
    conversation = uuid.uuid4()
    one, two, other = (_ready(tenant, image_config, conversation=conversation) for _ in range(3))
    ImageSlot.objects.filter(pk=other.pk).update(conversation_id=uuid.uuid4())
    names = [one.file, one.thumbnail, two.file, two.thumbnail, other.file]
    assert all(files.exists(n) for n in names)
    with django_capture_on_commit_callbacks(execute=True):
        assert slots.delete_slots_of_messages(tenant, [one.message_id, "junk"]) == 1
    assert not files.exists(one.file) and not files.exists(one.thumbnail)
    with django_capture_on_commit_callbacks(execute=True):
        assert slots.delete_slots_of_conversation(tenant, conversation) == 1
    assert not files.exists(two.file) and files.exists(other.file)
    with django_capture_on_commit_callbacks(execute=True):
        tenant.delete()
    assert not files.exists(other.file) and not ImageSlot.objects.exists()


def test_a_message_deleted_from_the_history_takes_its_slots(
    tenant, conversation, image_config, django_capture_on_commit_callbacks
):
    from memory import services as messages

    session = conversation.session_id
    kept = messages.save_message(tenant, session, role="assistant", content="kept")
    gone = messages.save_message(tenant, session, role="assistant", content="gone")
    slot_kept = _ready(tenant, image_config, message=kept.id, session_id=session)
    slot_gone = _ready(tenant, image_config, message=gone.id, session_id=session)
    with django_capture_on_commit_callbacks(execute=True):
        messages.delete_messages_by_timestamps(tenant, session, [gone.ts])
    assert [s.pk for s in selectors.slots_of_messages(tenant, [kept.id, gone.id])] == [slot_kept.pk]
    assert not files.exists(slot_gone.file) and files.exists(slot_kept.file)


def test_a_reprompt_sets_the_prompt_and_the_size_of_an_untried_slot(tenant, image_config):
    slot = slots.reserve_slot(tenant, uuid.uuid4(), uuid.uuid4(), 0, "first", image_config,
                        enqueue=False)  # fmt: skip
    assert slots.reprompt(slot.pk, "second", aspect=(16, 9))
    slot.refresh_from_db()
    assert slot.prompt == "second" and (slot.width, slot.height) == (64, 32)  # 64 x 36 -> 8s
    assert slots.reprompt(slot.pk, "third", aspect=(1, 0)) and slot.width == 64  # a zero is ignored
    ImageSlot.objects.filter(pk=slot.pk).update(attempted_at=slot.created_at)
    assert not slots.reprompt(slot.pk, "too late")
