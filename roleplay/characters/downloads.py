"""HTTP answers that are files: avatars (cached, revalidated by ETag) and card downloads.

Plain Django responses, shared by the console pages and the API views (DRF passes an
``HttpResponse`` through untouched).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpResponse, HttpResponseNotModified
from django.utils.http import content_disposition_header

from roleplay.characters.selectors import Avatar

# Avatars change in place (same URL): clients keep them, and ask again with the ETag.
AVATAR_CACHE = "private, no-cache"


def image_response(request, avatar: Avatar) -> HttpResponse:
    """The avatar with its validator; ``304`` when the client already holds these bytes."""
    if avatar.etag in _tags(request.headers.get("If-None-Match", "")):
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = HttpResponse(avatar.data, content_type=avatar.content_type)
    response["ETag"] = avatar.etag
    response["Cache-Control"] = AVATAR_CACHE
    response["X-Avatar-Generated"] = "true" if avatar.generated else "false"
    return response


def _tags(header: str) -> set[str]:
    return {tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()}


@dataclass(frozen=True)
class FileOut:
    """A file made to be downloaded: a card, a chat."""

    data: bytes
    content_type: str
    filename: str


def download(data: bytes, content_type: str, filename: str) -> HttpResponse:
    """A file to save: ``Content-Disposition: attachment`` with a safe file name."""
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, filename)
    response["Cache-Control"] = "private, no-store"
    return response
