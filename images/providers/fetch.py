"""Fetching an image a backend answered with a URL: the SSRF guard.

Only ``http(s)`` URLs without credentials (``images.engine.addresses``); the host is
resolved and *every* address it resolves to must be public (loopback only when
``IMAGES_ALLOW_LOOPBACK_FETCH``), and the connection is made to the address that was checked
(the guard is the transport's network backend, so a second lookup cannot answer otherwise:
no DNS rebinding), while TLS still verifies the host's own name. Redirects are followed by
hand, at most three, each hop checked the same way. The body is read up to the byte cap,
within the config's timeout; no proxy from the environment is used.
"""

from __future__ import annotations

import socket
from urllib.parse import urljoin

import httpcore
import httpx
from django.conf import settings

from images.engine.addresses import check_addresses, fetch_target
from images.errors import Invalid
from images.providers import BackendFailed, BackendTimeout

MAX_REDIRECTS = 3
REDIRECTS = (301, 302, 303, 307, 308)


class GuardedBackend(httpcore.SyncBackend):
    """Connects only to checked addresses of the host asked for."""

    def __init__(self, allow_loopback: bool) -> None:
        self.allow_loopback = allow_loopback

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            message = "the image host does not resolve"
            raise Invalid("fetch_refused", message, {"field": "url"}) from exc
        addresses = [str(info[4][0]) for info in infos]
        checked = check_addresses(addresses, allow_loopback=self.allow_loopback)
        return super().connect_tcp(
            str(checked[0]), port, timeout=timeout, local_address=local_address,
            socket_options=socket_options,
        )  # fmt: skip


def client(timeout: float, allow_loopback: bool | None = None) -> httpx.Client:
    allow = settings.IMAGES_ALLOW_LOOPBACK_FETCH if allow_loopback is None else allow_loopback
    transport = httpx.HTTPTransport(retries=0)
    transport._pool._network_backend = GuardedBackend(allow)  # the one seam httpx offers
    return httpx.Client(
        transport=transport, timeout=timeout, follow_redirects=False, trust_env=False
    )


def fetch_image(
    url: str, *, timeout: float, max_bytes: int, allow_loopback: bool | None = None
) -> tuple[bytes, str | None]:
    """The bytes at ``url`` and the type the server declared; a 422 ``fetch_refused`` for a
    URL or address the guard refuses, a coded backend error for the rest."""
    with client(timeout, allow_loopback) as http:
        for _hop in range(MAX_REDIRECTS + 1):
            fetch_target(url)
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
