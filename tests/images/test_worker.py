"""Chat image slots through real Celery: the reservation queues the drawing on commit, a
worker process draws it (scripted backend), and the beat's sweep is a registered task."""

from __future__ import annotations

import time
import uuid

import pytest
from django.conf import settings

from images import files
from images.models import ImageSlot
from images.services.slots import reserve_slot

pytestmark = pytest.mark.django_db(transaction=True)


def wait_for(slot_id, timeout: float = 60.0) -> ImageSlot:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        slot = ImageSlot.objects.get(pk=slot_id)
        if slot.status != "pending":
            return slot
        time.sleep(0.1)
    raise AssertionError("the slot stayed pending")


def test_a_reserved_slot_is_drawn_by_a_worker(celery_worker, tenant, images_llm, image_config):
    slot = reserve_slot(tenant, uuid.uuid4(), uuid.uuid4(), 0, "the guard takes the key",
                        image_config)  # fmt: skip
    assert slot.status == "pending"
    done = wait_for(slot.pk)
    assert done.status == "ready", (done.status, done.code)
    assert files.read(done.file).startswith(b"\x89PNG") and done.thumbnail
    assert len(images_llm.images.requests) == 1


def test_a_backend_failure_through_the_worker_fails_the_slot(
    celery_worker, tenant, images_llm, image_config
):
    images_llm.images.script.status = 503
    slot = reserve_slot(tenant, uuid.uuid4(), uuid.uuid4(), 0, "x", image_config)
    done = wait_for(slot.pk)
    assert (done.status, done.code, done.file) == ("failed", "backend_error", "")


def test_the_sweep_is_on_the_beat_schedule():
    from console.celery import app

    entries = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "images.sweep_slots" in entries
    app.loader.import_default_modules()
    assert "images.sweep_slots" in app.tasks and "images.draw_slot" in app.tasks
