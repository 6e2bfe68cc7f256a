"""Image files: stored with Django's storage API (the ``images`` storage of ``STORAGES``:
files under ``MEDIA_ROOT/images/`` by default, or any backend such as an S3-compatible one),
under a per-tenant prefix, with a Pillow thumbnail; read back and deleted by name.

Names carry a random UUID, but a name is never a capability: files are served only through
``images.signing`` links, which check the tenant.
"""

from __future__ import annotations

import io
import logging
import uuid
from collections.abc import Iterable

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.http import HttpResponse
from PIL import Image

from images.engine.image_bytes import ImageInfo

log = logging.getLogger(__name__)
THUMBNAIL_MIME = "image/jpeg"


def storage():
    return storages["images"]


def tenant_prefix(tenant_id) -> str:
    return f"{tenant_id}/"


def _thumbnail(data: bytes) -> bytes:
    side = settings.IMAGES_THUMBNAIL_SIDE
    with Image.open(io.BytesIO(data)) as image:
        image.thumbnail((side, side))
        out = io.BytesIO()
        image.convert("RGB").save(out, format="JPEG", quality=82)
    return out.getvalue()


def store(tenant_id, kind: str, data: bytes, info: ImageInfo, *, thumbnail: bool) -> tuple:
    """Save ``data`` (already checked) as ``<tenant>/<kind>/<uuid>.<ext>``, and its thumbnail
    beside it when asked: ``(name, thumbnail name or "")``."""
    key = uuid.uuid4().hex
    base = f"{tenant_prefix(tenant_id)}{kind}/{key}"
    name = storage().save(f"{base}.{info.extension}", ContentFile(data))
    thumb = ""
    if thumbnail:
        try:
            thumb = storage().save(f"{base}.thumb.jpg", ContentFile(_thumbnail(data)))
        except Exception:
            delete([name])
            raise
    return name, thumb


def read(name: str) -> bytes:
    with storage().open(name, "rb") as handle:
        return handle.read()


def exists(name: str) -> bool:
    return bool(name) and storage().exists(name)


def delete(names: Iterable[str]) -> int:
    """Delete each named file that exists; a storage error is logged, not raised (the rows
    are gone either way, and a file left behind is never served: no row or link names it)."""
    done = 0
    for name in names:
        if not name:
            continue
        try:
            storage().delete(name)
            done += 1
        except Exception:
            log.warning("could not delete image file %s", name, exc_info=True)
    return done


def mime_of(name: str) -> str:
    ext = name.rsplit(".", 1)[-1].lower()
    return {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
            "webp": "image/webp"}.get(ext, "application/octet-stream")  # fmt: skip


def answer(name: str):
    """The stored file ``name`` as an HTTP answer (private, briefly cached, its type not
    sniffed), or None when it is gone. The caller has checked who may see it."""
    if not exists(name):
        return None
    response = HttpResponse(read(name), content_type=mime_of(name))
    response["Cache-Control"] = "private, max-age=300"
    response["X-Content-Type-Options"] = "nosniff"
    return response
