from django.urls import path

from roleplay.consumers import ConversationConsumer

# Any id text reaches the consumer, which refuses a malformed id exactly like an unknown one
# (close 4404): a ``<uuid:>`` converter would leave such a path without a route, and the
# router would fail the handshake with an error instead.
websocket_urlpatterns = [
    path("ws/conversations/<str:conversation_id>/", ConversationConsumer.as_asgi()),
]
