"""Which URLs and addresses the server may fetch an image from (the SSRF guard's rules).

A backend may answer with an image URL; fetching it runs inside the server's network, so a
hostile or compromised backend could point it at a database, a cloud metadata service or
the admin port of something on the same host. Only ``http(s)`` URLs without credentials are
fetched, and only from addresses that are globally routable: private, loopback, link-local
(169.254.169.254 included), multicast, reserved, unspecified, shared (100.64/10) and
IPv4-mapped forms of those are refused. ``allow_loopback`` (a setting: on in tests and for a
backend on the same machine, off by default) lets 127.0.0.0/8 and ::1 through, nothing else.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from images.errors import Invalid

FETCH_REFUSED = "fetch_refused"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int


def _refuse(message: str) -> Invalid:
    return Invalid(FETCH_REFUSED, message, {"field": "url"})


def fetch_target(url: object) -> Target:
    """Where ``url`` points, or a 422 ``fetch_refused`` when it may not be fetched at all."""
    if not isinstance(url, str) or not url or len(url) > 8_192:
        raise _refuse("the image URL is not a URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise _refuse("the image URL is not a valid URL") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise _refuse("only http and https image URLs are fetched")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise _refuse("an image URL with a user name or password is not fetched")
    if not parts.hostname:
        raise _refuse("the image URL has no host")
    return Target(scheme, parts.hostname, port or (443 if scheme == "https" else 80))


def parse_address(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def address_allowed(address: IPAddress, *, allow_loopback: bool = False) -> bool:
    """Whether a connection to ``address`` may be made."""
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            return address_allowed(mapped, allow_loopback=allow_loopback)
        if address.teredo is not None:
            return False
    if address.is_loopback:
        return allow_loopback
    if (
        address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    ):
        return False
    return address.is_global


def check_addresses(addresses: list[str], *, allow_loopback: bool = False) -> list[IPAddress]:
    """Every address a host resolved to, each allowed, or a 422 ``fetch_refused``: one bad
    address refuses the host (a resolver may answer differently the next time)."""
    if not addresses:
        raise _refuse("the image host does not resolve")
    parsed = []
    for text in addresses:
        address = parse_address(text)
        if address is None or not address_allowed(address, allow_loopback=allow_loopback):
            raise _refuse("the image host resolves to an address that is not public")
        parsed.append(address)
    return parsed
