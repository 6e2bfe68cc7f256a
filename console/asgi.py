"""ASGI entry point: HTTP through Django, WebSockets through Channels."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_asgi_app = get_asgi_application()

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
