"""Every route of the product, read from the URL resolver and the Channels routing.

The matrices and the contract tests iterate these tables instead of lists written by hand,
so a route added to ``console.urls`` (at any depth of ``include``) or to
``roleplay.sockets.routing`` is checked the moment it exists. Each route gets a *kind*:

- ``api``: a DRF view behind token or session auth (``/api/v1/``, ``/v1/``);
- ``public``: a view anyone may call (login, health, the schema and its docs);
- ``admin``: Django's admin site (staff only, not tenant-scoped);
- ``app``: the player app's pages (``/app/``), behind a player account;
- ``console``: every other page: the operator console and the player's play page;
- ``socket``: a WebSocket route.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.views import APIView

from tests.api.helpers import _pattern_text  # a regex route's text, or a path()'s

_NAMED_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")
_CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")
_FORMAT_SUFFIX = ("(?P<format>", "<drf_format_suffix:format>")
_SAFE = ("GET", "HEAD", "OPTIONS")


@dataclass(frozen=True)
class Route:
    """One URL pattern as a path template: ``/console/characters/{pk}/``."""

    template: str
    name: str
    namespace: str
    prefix: str  # the outermost include: "/api/v1/", "/v1/", "/console/worldbooks/", "/"
    callback: object

    @property
    def key(self) -> str:
        """The route's name (``admin:index``), or its template where it has none."""
        if self.name:
            return f"{self.namespace}:{self.name}" if self.namespace else self.name
        return self.template

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(re.findall(r"\{(\w+)\}", self.template))

    @property
    def view_class(self):
        return getattr(self.callback, "cls", None)

    @cached_property
    def kind(self) -> str:
        view = self.view_class
        if self.namespace == "admin":
            return "admin"
        if self.template.startswith("/app/"):
            return "app"
        if view is not None and issubclass(view, APIView):
            initkwargs = getattr(self.callback, "initkwargs", {})
            permissions = initkwargs.get("permission_classes", view.permission_classes)
            return "public" if not permissions else "api"
        return "console"

    @property
    def documented(self) -> bool:
        """Whether the view takes part in the OpenAPI document (DRF's API root opts out)."""
        return self.kind == "api" and getattr(self.view_class, "schema", True) is not None

    @property
    def methods(self) -> tuple[str, ...]:
        """HTTP methods a DRF route serves (viewset actions, or the view's handlers)."""
        actions = getattr(self.callback, "actions", None)
        if actions:
            names = [m for m in actions if m not in ("head", "options")]
        else:
            names = [
                m
                for m in self.view_class.http_method_names
                if m not in ("head", "options", "trace") and hasattr(self.view_class, m)
            ]
        return tuple(sorted(m.upper() for m in names))

    @property
    def writes(self) -> tuple[str, ...]:
        return tuple(m for m in self.methods if m not in _SAFE)

    def path(self, **values) -> str:
        return self.template.format(**{k: str(v) for k, v in values.items()})

    def __str__(self) -> str:
        return f"{self.key} {self.template}"


def _template(raw: str) -> str:
    text = raw.replace("^", "").replace("$", "").replace("/?", "/")
    text = _NAMED_GROUP.sub(lambda m: "{" + m.group(1) + "}", text)
    text = _CONVERTER.sub(lambda m: "{" + m.group(1) + "}", text)
    if re.search(r"[\\()\[\]*+?|]", text):
        raise AssertionError(f"cannot turn URL pattern {raw!r} into a path template")
    return "/" + text


def _walk(patterns, raw: str = "", namespace: str = "", prefix: str = ""):
    for entry in patterns:
        text = raw + _pattern_text(entry.pattern)
        if isinstance(entry, URLResolver):
            inner = entry.namespace or namespace
            yield from _walk(entry.url_patterns, text, inner, prefix or _template(text))
        elif isinstance(entry, URLPattern) and not any(s in text for s in _FORMAT_SUFFIX):
            yield Route(_template(text), entry.name or "", namespace, prefix or "/", entry.callback)


def all_routes() -> list[Route]:
    """Every HTTP route of ``console.urls`` (format-suffix twins folded into their route)."""
    routes: dict[str, Route] = {}
    for route in _walk(get_resolver().url_patterns):
        routes.setdefault(route.template, route)
    return sorted(routes.values(), key=lambda route: route.template)


def routes_of(kind: str) -> list[Route]:
    return [route for route in all_routes() if route.kind == kind]


def api_routes() -> list[Route]:
    """The API routes that the OpenAPI document describes."""
    return [route for route in routes_of("api") if route.documented]


def socket_routes() -> list[Route]:
    """The socket routes that open an object; the catch-all that refuses every other path
    (``NoSuchSocket``) opens none, and ``tests/ws`` checks that it refuses."""
    from roleplay.sockets.routing import NoSuchSocket, websocket_urlpatterns

    return [
        Route(_template(_pattern_text(p.pattern)), p.name or "", "", "/ws/", p.callback)
        for p in websocket_urlpatterns
        if getattr(p.callback, "consumer_class", None) is not NoSuchSocket
    ]
