"""``history.changed`` to every socket open on a conversation whose history changed shape
(messages deleted, archived, edited, another alternative shown), whichever door changed it:
a socket frame, the REST API (a rollback by timestamps, a trim, an edit), the console, a
clear or a task. The message store sends ``memory.signals.history_changed`` once the change
commits; this turns it into the socket event, so a player's or an operator's open page
reads its transcript again at once.

The event goes through the channel layer's group of the conversation (with no ``origin``,
so every process, this one included, hands it to its sockets): the signal may come on any
thread (a request's, a database thread of a turn, a Celery worker), never on the event loop
the sockets live on. A Redis failure costs the event, never the change.
"""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from console.scoping import is_uuid
from memory.signals import history_changed
from roleplay.turns import hub

logger = logging.getLogger(__name__)

EVENT = "history.changed"


def on_history_changed(sender, *, tenant, session_id, reason, **_) -> None:
    if not session_id or not is_uuid(session_id):  # every conversation cleared, or none
        return
    message = {"type": hub.STREAM_EVENT, "event": {"type": EVENT, "reason": reason}}
    try:
        async_to_sync(get_channel_layer().group_send)(hub.group_name(session_id), message)
    except Exception:
        logger.warning("could not announce a history change of %s", session_id, exc_info=True)


history_changed.connect(on_history_changed, dispatch_uid="roleplay.history_events")
