"""The SSRF guard: which URLs and addresses the server may call out to, for every door that
fetches a URL someone else chose (an image backend's answer, an operator's workflow tool or
MCP server).

A call runs inside the server's network, so a hostile or mistaken URL could reach a
database, a cloud metadata service or the admin port of something on the same host. Only
``http(s)`` URLs without credentials are called, and only addresses that are globally
routable: private, loopback, link-local (169.254.169.254 included), multicast, reserved,
unspecified, shared (100.64/10) and IPv4-mapped forms of those are refused. A
:class:`Policy` may let loopback (127.0.0.0/8, ::1: the tests, a backend on the same
machine) or private networks (10/8, 172.16/12, 192.168/16, fc00::/7: a service in the same
private network) through, each by a deployment setting of its caller; link-local and the
rest never.

The host is resolved and *every* address it resolves to must pass; the connection is then
made to the address that was checked (the guard is the transport's network backend, so a
second lookup cannot answer otherwise: no DNS rebinding), while TLS still verifies the host's
own name. :func:`sync_client` (httpx) and :func:`async_client` (httpx2, the MCP client's
HTTP library) build clients with that backend, no redirects followed and no proxy from the
environment. A refusal is :class:`Refused`; callers map it to their own coded error.
No Django.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
import httpcore
import httpcore2
import httpx
import httpx2

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
MAX_URL_CHARS = 8_192


class Refused(ValueError):
    """The URL or an address its host resolves to may not be called."""


@dataclass(frozen=True)
class Policy:
    """What besides public addresses may be reached."""

    allow_loopback: bool = False
    allow_private: bool = False


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int


def url_target(url: object) -> Target:
    """Where ``url`` points, or :class:`Refused` when it may not be called at all."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL_CHARS:
        raise Refused("not a URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise Refused("not a valid URL") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise Refused("only http and https URLs are called")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise Refused("a URL with a user name or password is not called")
    if not parts.hostname:
        raise Refused("the URL has no host")
    return Target(scheme, parts.hostname, port or (443 if scheme == "https" else 80))


def parse_address(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def address_allowed(address: IPAddress, policy: Policy = Policy()) -> bool:
    """Whether a connection to ``address`` may be made under ``policy``."""
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            return address_allowed(mapped, policy)
        if address.teredo is not None:
            return False
    if address.is_loopback:
        return policy.allow_loopback
    if address.is_link_local or address.is_multicast or address.is_unspecified:
        return False
    if policy.allow_private and _private_network(address):
        return True
    if address.is_private or address.is_reserved:
        return False
    return address.is_global


_PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)


def _private_network(address: IPAddress) -> bool:
    return any(
        address in network for network in _PRIVATE_NETWORKS if network.version == address.version
    )


def check_addresses(addresses: list[str], policy: Policy = Policy()) -> list[IPAddress]:
    """Every address a host resolved to, each allowed, or :class:`Refused`: one bad address
    refuses the host (a resolver may answer differently the next time)."""
    if not addresses:
        raise Refused("the host does not resolve")
    parsed = []
    for text in addresses:
        address = parse_address(text)
        if address is None or not address_allowed(address, policy):
            raise Refused("the host resolves to an address that is not public")
        parsed.append(address)
    return parsed


def literal_refused(url: str, policy: Policy = Policy()) -> str | None:
    """Why ``url`` is refused without resolving anything (its form, or a host that is an
    address the policy refuses), or None: a save-time check of a URL an operator types."""
    try:
        target = url_target(url)
    except Refused as exc:
        return str(exc)
    address = parse_address(target.host.strip("[]"))
    if address is not None and not address_allowed(address, policy):
        return "the host is an address that is not public"
    if target.host.rstrip(".").lower() == "localhost" and not policy.allow_loopback:
        return "the host is this machine (localhost)"
    return None


def _resolved(infos) -> list[str]:
    return [str(info[4][0]) for info in infos]


async def check_url(url: str, policy: Policy) -> Target:
    """``url``'s target once its host resolved to allowed addresses only, or
    :class:`Refused`: a clear refusal before a client library is involved (the guarded
    backend still checks the address it connects to)."""
    target = url_target(url)
    try:
        infos = await anyio.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise Refused("the host does not resolve") from exc
    check_addresses(_resolved(infos), policy)
    return target


class GuardedBackend(httpcore.SyncBackend):
    """Connects only to checked addresses of the host asked for (httpx, blocking)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise Refused("the host does not resolve") from exc
        checked = check_addresses(_resolved(infos), self.policy)
        return super().connect_tcp(
            str(checked[0]), port, timeout=timeout, local_address=local_address,
            socket_options=socket_options,
        )  # fmt: skip


class GuardedAsyncBackend(httpcore2.AnyIOBackend):
    """Connects only to checked addresses of the host asked for (httpx2, asyncio)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise Refused("the host does not resolve") from exc
        checked = check_addresses(_resolved(infos), self.policy)
        return await super().connect_tcp(
            str(checked[0]), port, timeout=timeout, local_address=local_address,
            socket_options=socket_options,
        )  # fmt: skip


def sync_client(timeout: float, policy: Policy) -> httpx.Client:
    """A blocking client that reaches only what ``policy`` allows, following no redirect."""
    transport = httpx.HTTPTransport(retries=0)
    transport._pool._network_backend = GuardedBackend(policy)  # the one seam httpx offers
    return httpx.Client(
        transport=transport, timeout=timeout, follow_redirects=False, trust_env=False
    )


def async_client(
    timeout: float, policy: Policy, headers: Mapping[str, str] | None = None
) -> httpx2.AsyncClient:
    """An asyncio client that reaches only what ``policy`` allows, following no redirect."""
    transport = httpx2.AsyncHTTPTransport(retries=0, trust_env=False)
    transport._pool._network_backend = GuardedAsyncBackend(policy)  # type: ignore[union-attr]
    return httpx2.AsyncClient(
        transport=transport, timeout=timeout, follow_redirects=False, trust_env=False,
        headers=dict(headers or {}),
    )  # fmt: skip
