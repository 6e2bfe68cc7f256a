"""ASGI entry point: HTTP through Django, WebSockets through Channels."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

import django  # noqa: E402
from django.core.handlers.asgi import ASGIHandler  # noqa: E402

django.setup(set_prefix=False)


class LargeChunkASGIHandler(ASGIHandler):
    """Django hands a response body to the server in 64 KiB pieces, one await each; worldbook
    selection answers run near a megabyte, so send them in fewer, larger pieces."""

    chunk_size = 1024 * 1024


django_asgi_app = LargeChunkASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from roleplay.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Origin checks live in the consumer: session sockets must come from our own origin,
        # ticket sockets (integrators' front ends) may come from anywhere.
        "websocket": AuthMiddlewareStack(URLRouter(websocket_urlpatterns)),
    }
)
