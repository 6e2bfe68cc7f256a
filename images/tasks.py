"""Background image work: thin wrappers around ``images.services.slots``."""

from __future__ import annotations

from celery import shared_task

from images.services import slots


@shared_task(acks_late=True, ignore_result=True, name="images.draw_slot")
def draw_slot(slot_id: str) -> None:
    slots.draw_slot(slot_id)


@shared_task(ignore_result=True, name="images.sweep_slots")
def sweep_slots() -> int:
    return slots.sweep_slots()
