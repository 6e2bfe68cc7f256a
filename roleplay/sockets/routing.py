from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import path, re_path

from roleplay.sockets.consumers import ConversationConsumer


class NoSuchSocket(AsyncWebsocketConsumer):
    """Any other socket path: refused like an unknown conversation (close 4404)."""

    async def connect(self):
        await self.close(code=4404)


# Any id text reaches the consumer, which refuses a malformed id exactly like an unknown one
# (close 4404): a ``<uuid:>`` converter would leave such a path without a route, and the
# router would fail the handshake with an error instead. ``<path:>`` because the server
# decodes ``%2F`` before routing, so ``..%2F..%2Fetc`` arrives holding slashes; every other
# path is refused the same way rather than answered with a server error.
websocket_urlpatterns = [
    path("ws/conversations/<path:conversation_id>/", ConversationConsumer.as_asgi()),
    re_path(r"", NoSuchSocket.as_asgi()),
]
