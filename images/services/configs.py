"""Writes of image configs: every door (REST, console form) goes through these, so the rules
of ``images.engine.config`` hold for all of them."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from images.engine.config import FIELDS, combination_problems, config_problems
from images.engine.request import Violation, refusal
from images.errors import Conflict
from images.models import ImageConfig, ImageSlot, SlotStatus

EDITABLE = tuple(FIELDS)


def _check(found: list[Violation]) -> None:
    if found:
        raise refusal(found)


def _apply(config: ImageConfig, fields: dict) -> None:
    for name, value in fields.items():
        if name == "api_key_env":
            value = value.strip()
        setattr(config, name, value)
    whole = {name: getattr(config, name) for name in EDITABLE}
    _check(combination_problems(whole))
    try:
        with transaction.atomic():
            config.save()
    except IntegrityError as exc:
        raise Conflict(
            "name_taken", "an image config with this name exists", {"field": "name"}
        ) from exc


def create_image_config(tenant, **fields) -> ImageConfig:
    """A new config of ``tenant``; a 422 naming the first broken field, a 409 on a name the
    tenant already uses."""
    _check(config_problems(fields, creating=True))
    config = ImageConfig(tenant=tenant)
    _apply(config, fields)
    return config


def update_image_config(config: ImageConfig, **fields) -> ImageConfig:
    """Change the given ``fields`` only (a partial update)."""
    _check(config_problems(fields, creating=False))
    _apply(config, fields)
    return config


def delete_image_config(config: ImageConfig) -> None:
    """Stored images stay (their slots and jobs keep no config); slots still drawing with it
    fail now, since nothing can finish them with a config that is gone."""
    with transaction.atomic():
        ImageSlot.objects.filter(config=config, status=SlotStatus.PENDING).update(
            status=SlotStatus.FAILED, code="config_deleted"
        )
        config.delete()
