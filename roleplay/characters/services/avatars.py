"""Writes of avatars, the one image a character or a persona has.

An upload is decoded and re-encoded by :func:`roleplay.characters.cards.images.normalize_avatar`
(PNG/JPEG/WebP in, a bounded PNG out; bad images and bombs refused with stable codes) before
anything is written, and only the two avatar columns are saved.
"""

from __future__ import annotations

from django.db import models

from roleplay.characters.cards.images import CONTENT_TYPE, normalize_avatar
from roleplay.services import rows

AVATAR_FIELDS = ("avatar", "avatar_content_type")


def set_avatar(owner: models.Model, data: bytes) -> models.Model:
    """Store ``data`` (an uploaded image) as the avatar of ``owner`` (character or persona)."""
    png = normalize_avatar(data)
    return store_png(owner, png)


def store_png(owner: models.Model, png: bytes) -> models.Model:
    """Store an image :func:`normalize_avatar` already made (the card importer's)."""
    owner.avatar = png
    owner.avatar_content_type = CONTENT_TYPE
    return rows.save(owner, changed=AVATAR_FIELDS)


def clear_avatar(owner: models.Model) -> models.Model:
    owner.avatar = None
    owner.avatar_content_type = ""
    return rows.save(owner, changed=AVATAR_FIELDS)
