"""The Content-Security-Policy: django-csp's middleware plus the two parts a fixed policy
in settings cannot say.

- ``connect-src`` names the page's own WebSocket origin (``ws://host`` or ``wss://host``). CSP
  Level 3 lets ``'self'`` cover same-origin sockets, and Chromium does (checked in
  ``tests/security/test_csp_browser.py``), but browsers that predate Level 3 refuse a
  ``ws:`` URL that ``'self'`` alone would have to cover. The host is the request's own,
  already checked against ``ALLOWED_HOSTS``; a scheme-wide ``ws:`` would allow any host.
- The API docs page (drf-spectacular's Swagger UI) loads its scripts and styles from
  ``SWAGGER_UI_DIST`` and starts with an inline script, so that one page gets those sources
  and ``'unsafe-inline'``; its other directives (frames, plugins, base, forms) stay strict.
"""

from __future__ import annotations

from functools import cache
from urllib.parse import urlsplit

from csp.constants import SELF, UNSAFE_INLINE
from csp.middleware import CSPMiddleware, PolicyParts
from django.core.exceptions import DisallowedHost
from django.urls import NoReverseMatch, reverse


def websocket_origin(request) -> str | None:
    """``ws(s)://host[:port]`` of the page, or None for a request whose host is not ours."""
    try:
        host = request.get_host()
    except DisallowedHost:
        return None
    return f"{'wss' if request.is_secure() else 'ws'}://{host}"


@cache
def api_docs_path() -> str | None:
    try:
        return reverse("docs")
    except NoReverseMatch:
        return None


def api_docs_policy() -> dict[str, list[str]]:
    """The directives the Swagger UI page needs on top of the site's policy."""
    from drf_spectacular.settings import spectacular_settings

    dist = urlsplit(spectacular_settings.SWAGGER_UI_DIST)
    sources = [SELF] + ([f"{dist.scheme}://{dist.netloc}"] if dist.netloc else [])
    return {
        "script-src": [*sources, UNSAFE_INLINE],
        "style-src": [*sources, UNSAFE_INLINE],
        "img-src": [*sources, "data:"],
    }


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware with the page's socket origin and the docs page's sources."""

    def get_policy_parts(self, request, response, report_only: bool = False) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if report_only:
            return parts
        origin = websocket_origin(request)
        if origin:
            update = dict(parts.update or {})
            update["connect-src"] = [*update.get("connect-src", []), origin]
            parts.update = update
        docs = api_docs_path()
        if docs and request.path_info.startswith(docs):
            parts.update = {**(parts.update or {}), **api_docs_policy()}
        return parts
