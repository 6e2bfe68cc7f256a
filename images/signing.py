"""Signed, expiring links to stored images: the only way a file is served.

A link carries the tenant and the file's storage name, signed with ``SECRET_KEY``
(``django.core.signing``, salted for images) and stamped with its time. The file view
answers only when the signature holds, the link is younger than
``IMAGES_URL_MAX_AGE_SECONDS``, the caller belongs to the link's tenant and the name is
under that tenant's prefix; anything else is the same 404. There is no listing.
"""

from __future__ import annotations

from django.conf import settings
from django.core import signing

from images.errors import not_found
from images.files import tenant_prefix

SALT = "images.file"
FILES_PATH = "/api/v1/images/files/"


def token_for(tenant_id, name: str) -> str:
    return signing.dumps({"t": str(tenant_id), "n": name}, salt=SALT, compress=True)


def url_for(tenant_id, name: str) -> str:
    """The signed link of one stored file ("" when there is none)."""
    return f"{FILES_PATH}{token_for(tenant_id, name)}" if name else ""


CONSOLE_FILES_PATH = "/console/images/files/"


def console_url_for(tenant_id, name: str) -> str:
    """The same link for a console page (a signed-in user of the tenant)."""
    return f"{CONSOLE_FILES_PATH}{token_for(tenant_id, name)}/" if name else ""


def name_from(token: str, tenant_id, *, max_age: int | None = None) -> str:
    """The storage name a link names, for a caller of ``tenant_id``; a 404 otherwise."""
    age = settings.IMAGES_URL_MAX_AGE_SECONDS if max_age is None else max_age
    try:
        payload = signing.loads(token, salt=SALT, max_age=age)
    except (signing.BadSignature, ValueError, TypeError, UnicodeError) as exc:
        raise not_found("no such image") from exc
    if not isinstance(payload, dict):
        raise not_found("no such image")
    tenant, name = payload.get("t"), payload.get("n")
    if tenant != str(tenant_id) or not isinstance(name, str):
        raise not_found("no such image")
    if not name.startswith(tenant_prefix(tenant_id)) or ".." in name.split("/"):
        raise not_found("no such image")
    return name
