"""A story after an edit of a message it was built from (seed 002, Story: a changed history
is never carried on; here "the revision before that message, or a rebuild").

Every accepted reply and user action is a piece of evidence with its source position, so the
earliest piece whose message now holds another text is where the story stops being true:
the story goes back to the newest revision saved before that position (:func:`restored`),
or, when there is none, starts again from the visible history at the next request
(:func:`rebuilt`). A piece whose message is gone is a rollback's business (the source
watermark), not an edit's.
"""

from __future__ import annotations

import copy

from .evidence import Evidence


def earliest_edit(pieces: list[Evidence], stored: dict[str, str | None]) -> int | None:
    """The earliest source position among ``pieces`` whose message (``stored``: id → text
    now, None when gone) holds another text than the one captured; None when none does."""
    edited = [
        p.source_position
        for p in pieces
        if stored.get(p.message_id) is not None and not p.matches(stored[p.message_id])
    ]
    return min(edited, default=None)


def built_from(envelope: dict, position: int) -> bool:
    """Whether ``envelope`` was built from the message at ``position``: it folded that
    position in (its watermark is at or after it)."""
    return int(envelope.get("sourceWatermark") or 0) >= position


def restored(candidate: dict, head: dict) -> dict:
    """``candidate`` (a revision saved before the edited message) as the story to continue
    from: no reply waits for acceptance any more (the one it waited for is at or after the
    edit, or no longer the last reply), and event ids go on from the head's, so an event of
    the abandoned revisions is never numbered again."""
    env = copy.deepcopy(candidate)
    env["pendingActor"] = None
    env["nextEvent"] = max(int(env.get("nextEvent") or 1), int(head.get("nextEvent") or 1))
    return env


def rebuilt(head: dict) -> dict:
    """No revision precedes the edit: a story whose world is null, which the next request
    initialises from the visible history (``route``: a null world → ``initialise``)."""
    return {
        "version": head.get("version", 1),
        "character": head.get("character"),
        "sourceWatermark": 0,
        "world": None,
        "narrative": None,
        "acceptedTurns": [],
        "event": None,
        "unresolved": [],
        "nextEvent": int(head.get("nextEvent") or 1),
        "pendingActor": None,
        "acceptedMessage": None,
    }


def event_ids(envelope: dict) -> set[str]:
    """The events ``envelope`` holds: its current event and those waiting for settlement."""
    ids = {e["id"] for e in envelope.get("unresolved") or [] if isinstance(e, dict)}
    event = envelope.get("event")
    if isinstance(event, dict):
        ids.add(event["id"])
    return ids
