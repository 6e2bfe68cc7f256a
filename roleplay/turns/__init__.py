"""One chat turn: store the player's message, stream the reply, store it, keep a trace.

``records`` writes a turn's rows, ``context`` reads what generation needs, ``run`` generates
and streams; ``begin_and_load`` is the critical path between a player's message and the
request to the model. ``docs/turn.md`` follows a turn from the socket frame to the reply.
"""

from __future__ import annotations

from functools import cache

from console.rows import prepared
from roleplay.errors import TurnInProgress
from roleplay.groups import speaking
from roleplay.groups.selectors import has_members_sql
from roleplay.players.selectors import persona_for
from roleplay.regex_scripts.selectors import for_conversation, may_apply_sql
from roleplay.regex_scripts.turns import stored_text

from .context import HISTORY_LIMIT, TurnContext, load_context
from .phases import Phase, PhaseRun
from .plugin import PLUGINS, TurnPlugin, register
from .records import (
    LEASE,
    MAX_CONTENT_BYTES,
    TurnStart,
    begin_turn,
    expire_abandoned,
    finish_turn,
)
from .run import STORAGE_ERRORS, launch, request_cancel, run_turn

__all__ = [
    "HISTORY_LIMIT",
    "LEASE",
    "MAX_CONTENT_BYTES",
    "PLUGINS",
    "Phase",
    "PhaseRun",
    "STORAGE_ERRORS",
    "TurnContext",
    "TurnInProgress",
    "TurnPlugin",
    "TurnStart",
    "begin_and_load",
    "begin_turn",
    "expire_abandoned",
    "finish_turn",
    "launch",
    "load_context",
    "register",
    "request_cancel",
    "run_to_end",
    "run_turn",
    "started_event",
]


def begin_and_load(
    conversation,
    client_message_id: str,
    content: str = "",
    *,
    kind: str = "chat",
    speaker: str | None = None,
) -> tuple[TurnStart, TurnContext | Exception | None]:
    """Start a turn of ``kind`` (storing the player's message for ``chat``), then read its
    context (nothing is read for a repeated client id). A failure to load is returned for
    ``run_turn`` to report as the turn's error, since the turn exists by then. In a group,
    the reply's speaker is chosen first (``groups.speaking.choose``: ``speaker`` forces a
    member by id or name); a refusal there (``speaker_required``...) stores nothing, as
    does one of a plug-in's ``admit`` hooks (moderation, a suspended player)."""
    warnings = [w for admit in PLUGINS.admitters for w in admit(conversation, kind, content) or ()]
    scripts, grouped = _probe(conversation)
    if scripts and kind == "chat" and content:  # the message as stored (``regex_scripts``)
        active = for_conversation(conversation, persona_for(conversation).name)
        content = stored_text(active, content, "user")
    group = speaking.choose(
        conversation, kind, content, speaker, seed=client_message_id, grouped=grouped
    )
    start = begin_turn(
        conversation, client_message_id, content, kind=kind,
        speaker=group.speaker if group else None,
    )  # fmt: skip
    if start.duplicate:
        return start, None
    try:
        user_input = content if kind == "chat" else None
        context = load_context(start.turn, user_input, scripts=scripts, group=group)
        context.admission = start.admission
        if warnings:
            context.trace["warnings"] = warnings
        return start, context
    except Exception as exc:
        return start, exc


def _probe(conversation) -> tuple[bool, bool]:
    """The turn's first statement: (whether a regex script may apply, ``regex_scripts``;
    whether the conversation has other members than its character, ``groups``), so a
    one-character conversation without scripts reads neither."""
    character = conversation.character_id
    params = [conversation.tenant_id, character, conversation.pk, character]
    with prepared(_probe_sql(), params) as cursor:
        scripts, grouped = cursor.fetchone()
    return bool(scripts), bool(grouped)


@cache
def _probe_sql() -> str:
    return f"SELECT {may_apply_sql('%s', '%s')}, {has_members_sql('%s', '%s')}"


def started_event(start: TurnStart, client_message_id: str, preloaded=None) -> dict:
    """``turn.started`` of a turn, for every socket on the conversation; it names the
    character who speaks the reply (a group's member) when its context ``preloaded`` was
    read."""
    turn = start.turn
    who = preloaded.speaker if isinstance(preloaded, TurnContext) else None
    speaker = {"speaker": {"id": str(who.pk), "name": who.name}} if who is not None else {}
    return {
        "type": "turn.started",
        "turn_id": str(turn.id),
        "kind": turn.kind,
        "client_message_id": client_message_id,
        "user_message_id": str(turn.user_message_id) if turn.user_message_id else None,
        "assistant_message_id": str(turn.assistant_message_id),
        **speaker,
    }


def run_to_end(
    conversation,
    client_message_id: str,
    content: str = "",
    *,
    kind: str = "chat",
    speaker: str | None = None,
):
    """A turn started without a socket (the REST API): run it to its end and return the
    Turn row. Its events still reach every socket on the conversation; a repeated client id
    returns the earlier turn as it is now."""
    import asyncio

    from asgiref.sync import async_to_sync

    from roleplay.turns.priority import STARTS

    start, preloaded = begin_and_load(
        conversation, client_message_id, content, kind=kind, speaker=speaker
    )
    if not start.duplicate:

        async def drive() -> None:
            STARTS.begin()
            await asyncio.shield(
                launch(start.turn, started_event(start, client_message_id, preloaded), preloaded)
            )

        async_to_sync(drive)()
    start.turn.refresh_from_db()
    return start.turn
