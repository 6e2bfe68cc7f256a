"""ASGI entry point: HTTP through Django, WebSockets through Channels."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

from console.embedded import ensure_environment  # noqa: E402

ensure_environment()  # an entry point: embedded servers start here, never in settings

import gc  # noqa: E402
import sys  # noqa: E402

import django  # noqa: E402
from asgiref.sync import sync_to_async  # noqa: E402
from django.core.handlers.asgi import ASGIHandler  # noqa: E402

from console.http_request import Request  # noqa: E402

django.setup(set_prefix=False)

# A server process keeps large immutable caches (parsed worldbook revisions, compiled
# matchers) and answers with thousands of short-lived dicts; the default collector
# thresholds make it rescan those caches many times a second. Collect young objects less
# often, and move everything loaded at start-up out of the collector's sight.
gc.collect()
gc.freeze()
gc.set_threshold(50_000, 20, 100)
# Sync views run in a worker thread while the event loop thread streams sockets; a shorter
# GIL switch interval keeps one from stalling the other for the default 5 ms.
sys.setswitchinterval(0.001)


def _quiet_autobahn() -> None:
    """autobahn builds the arguments of a debug log line for every WebSocket frame it
    writes, even with debug logging off, and with click installed (Celery brings it) each
    frame costs four ``click.style`` calls for colours nobody sees. Plain text instead."""
    import autobahn.twisted.websocket as twisted_ws
    import autobahn.websocket.protocol as protocol

    for module in (protocol, twisted_ws):
        module.hltype = lambda obj: getattr(obj, "__qualname__", "?")
        module.hlval = str


_quiet_autobahn()


def _warm_up() -> None:
    """Load now what the first chat turn would otherwise load while a player waits: the
    token encoder (about 1.5 s), the ``openai`` SDK's modules (about 1 s) and the TLS
    context its clients share."""
    from console.tokens import count_tokens
    from roleplay.llm.providers.openai_compat import ssl_context

    count_tokens("warm up")
    ssl_context()


_warm_up()


class OneHopASGIHandler(ASGIHandler):
    """Django's ASGI handler with the synchronous middleware chain, entered in one thread hop.

    Under ASGI Django builds an async chain, and each of Django's own middlewares (security,
    sessions, CSRF, auth, messages…) then runs its request and response hooks through
    ``sync_to_async``: about fifteen hops between the event loop and the request's thread on
    every request, which measured 6-7 ms of a 9 ms API call here. Every view is synchronous,
    so the whole chain runs in the request's thread at once instead: one hop in, one out.
    The request's thread is the same as before (``thread_sensitive``, per request), so the
    database connection and every thread-local behave as they did.

    Django also hands a response body to the server in 64 KiB pieces, one await each;
    worldbook selection answers run near a megabyte, so they go in larger pieces. Requests
    are ``console.http_request.Request``: a charset no request can be read with is ignored."""

    chunk_size = 1024 * 1024
    request_class = Request

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)

    async def get_response_async(self, request):
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


django_asgi_app = OneHopASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from roleplay.sockets.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        # /static/ is answered at the ASGI level, before any middleware; everything else goes
        # to Django. (A sync-only static middleware would cost every request thread hops
        # around the whole middleware chain under ASGI.)
        "http": ASGIStaticFilesHandler(django_asgi_app),
        # Origin checks live in the consumer: session sockets must come from our own origin,
        # ticket sockets (integrators' front ends) may come from anywhere.
        "websocket": AuthMiddlewareStack(URLRouter(websocket_urlpatterns)),
    }
)
