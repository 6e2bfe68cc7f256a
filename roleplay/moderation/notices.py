"""Telling a player's open sockets they are suspended, through the channel layer, so a
socket on any daphne process closes at once (the chat socket joins :func:`player_group`)."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

# The message type the chat socket handles (``player_closed``).
CLOSED = "player.closed"


def player_group(player_id) -> str:
    return f"player.{player_id}"


def close_sockets(player_id, reason: str) -> None:
    """Every open chat socket of the player gets ``error player_suspended`` and closes.
    A channel layer that cannot be reached costs only the closing: new turns are refused
    anyway."""
    layer = get_channel_layer()
    if layer is None:
        return
    event = {"type": CLOSED, "code": "player_suspended", "reason": reason}
    try:
        async_to_sync(layer.group_send)(player_group(player_id), event)
    except Exception:
        logger.warning("could not close the sockets of player %s", player_id, exc_info=True)
