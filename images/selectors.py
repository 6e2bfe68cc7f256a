"""Reads of the images capability: configs, a config by reference, slots of messages."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable

from django.db.models import QuerySet

from console.lists import matching
from console.scoping import canonical_uuid, scoped
from console.storable import unstorable
from images.errors import not_found
from images.models import ImageConfig, ImageJob, ImageSlot


def image_configs(tenant, query: str = "") -> QuerySet[ImageConfig]:
    """The tenant's configs whose name, provider or model hold every word of ``query``."""
    return matching(scoped(ImageConfig, tenant), query, ("name", "provider", "model")).order_by(
        "name"
    )


def get_image_config(tenant, reference: str) -> ImageConfig:
    """The tenant's config by id or by name; another tenant's is not found (404)."""
    if not isinstance(reference, str) or unstorable(reference):
        raise not_found("no such image config")
    configs = scoped(ImageConfig, tenant)
    by_id = canonical_uuid(reference)
    found = configs.filter(pk=by_id).first() if by_id else None
    found = found or configs.filter(name=reference).first()
    if found is None:
        raise not_found("no such image config")
    return found


def api_key_status(config: ImageConfig) -> str:
    """``none`` (no variable named), ``set`` or ``missing`` (named, not in the environment)."""
    if not config.api_key_env:
        return "none"
    return "set" if os.environ.get(config.api_key_env) else "missing"


def get_job(tenant, job_id) -> ImageJob:
    job = scoped(ImageJob, tenant).filter(pk=canonical_uuid(job_id)).first()
    if job is None:
        raise not_found("no such image job")
    return job


def slots_of_messages(tenant, message_ids: Iterable) -> list[ImageSlot]:
    """The slots of the given messages, in message then index order."""
    ids = [i for i in (canonical_uuid(m) for m in message_ids) if i]
    found = scoped(ImageSlot, tenant).filter(message_id__in=ids)
    return list(found.order_by("message_id", "index"))


def slots_by_message(tenant, message_ids: Iterable) -> dict[uuid.UUID, list[ImageSlot]]:
    """The slots of the given messages, by message id, each message's in index order."""
    found: dict[uuid.UUID, list[ImageSlot]] = {}
    for slot in slots_of_messages(tenant, message_ids):
        found.setdefault(slot.message_id, []).append(slot)
    return found


def get_slot(tenant, message_id, index: int) -> ImageSlot:
    slot = (
        scoped(ImageSlot, tenant).filter(message_id=canonical_uuid(message_id), index=index).first()
    )
    if slot is None:
        raise not_found("no such image slot")
    return slot


def get_image_config_by_id(tenant, config_id) -> ImageConfig:
    """The tenant's config by its id (a path's): a malformed or foreign id is a 404."""
    found = scoped(ImageConfig, tenant).filter(pk=canonical_uuid(config_id)).first()
    if found is None:
        raise not_found("no such image config")
    return found
