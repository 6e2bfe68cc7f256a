"""Fetching an image a backend answered with a URL, through the SSRF guard
(``console.outbound``): only public addresses (loopback too when
``IMAGES_ALLOW_LOOPBACK_FETCH``; private networks never), each redirect hop (at most three,
followed by hand) checked the same way. The body is read up to the byte cap, within the
config's timeout. A refusal is a 422 ``fetch_refused``.
"""

from __future__ import annotations

from urllib.parse import urljoin

import httpx
from django.conf import settings

from console import outbound
from images.errors import Invalid
from images.providers import BackendFailed, BackendTimeout

MAX_REDIRECTS = 3
REDIRECTS = (301, 302, 303, 307, 308)


FETCH_REFUSED = "fetch_refused"


def client(timeout: float, allow_loopback: bool | None = None) -> httpx.Client:
    allow = settings.IMAGES_ALLOW_LOOPBACK_FETCH if allow_loopback is None else allow_loopback
    return outbound.sync_client(timeout, outbound.Policy(allow_loopback=allow))


def fetch_image(
    url: str, *, timeout: float, max_bytes: int, allow_loopback: bool | None = None
) -> tuple[bytes, str | None]:
    """The bytes at ``url`` and the type the server declared; a 422 ``fetch_refused`` for a
    URL or address the guard refuses, a coded backend error for the rest."""
    try:
        with client(timeout, allow_loopback) as http:
            return _fetch(http, url, max_bytes)
    except outbound.Refused as exc:
        message = f"the image URL is refused: {exc}"
        raise Invalid(FETCH_REFUSED, message, {"field": "url"}) from exc


def _fetch(http: httpx.Client, url: str, max_bytes: int) -> tuple[bytes, str | None]:
    """Each hop checked by the guard; redirects followed by hand, at most three."""
    for _hop in range(MAX_REDIRECTS + 1):
        outbound.url_target(url)
        try:
            with http.stream("GET", url) as response:
                if response.status_code in REDIRECTS:
                    location = response.headers.get("location", "")
                    url = urljoin(url, location)
                    continue
                if response.status_code != 200:
                    raise BackendFailed(
                        "image_fetch_failed",
                        f"the image URL answered {response.status_code}",
                    )
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > max_bytes:
                    raise _too_large(max_bytes)
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > max_bytes:
                        raise _too_large(max_bytes)
                return bytes(body), response.headers.get("content-type")
        except httpx.TimeoutException as exc:
            message = "the image URL did not answer in time"
            raise BackendTimeout("image_fetch_timeout", message) from exc
        except httpx.HTTPError as exc:
            message = f"the image URL failed: {type(exc).__name__}"
            raise BackendFailed("image_fetch_failed", message) from exc
    raise BackendFailed("image_fetch_failed", "the image URL redirects too many times")


def _too_large(limit: int) -> Invalid:
    return Invalid("image_too_large", f"the image is over {limit} bytes", {"field": "image"})
