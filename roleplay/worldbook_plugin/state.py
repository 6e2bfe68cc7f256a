"""What a chat turn gives worldbook selection besides the player's words (seed 002, the
Harness's worldbook wiring, steps 3 and 4): the ``state`` entries' ``conditions`` read, and
the public scene the query adds. Pure: plain values in, plain values out.

The ``state`` (every name is documented in docs/worldbook.md, "What a turn's state holds"):

- the fields of Agent V2's state when its text is a JSON object (the seed's rule: a state
  that does not parse as one adds none);
- ``agentic``: ``{revision, sections}``, the state's revision in force and its sections as
  the Director wrote them (label -> notes, only those with notes), for a scenario with Agent
  V2 (beyond the seed, whose wiring passes ``{}`` for a section text);
- ``story``: ``{revision, round, event, foreground: {id, title, phase}, flags:
  {interrupted, switchedTo}}``, the Story in force as the turn starts, for a scenario that
  runs Story; hidden matters (undercurrents, seeds) are never in it;
- ``vars``: the turn's macro variables (``{{getvar::name}}``) set before selection.

The three names are the host's: a JSON state field of the same name is replaced.

The query is the turn's input and the public scene, at most 8,000 characters: the JSON
state's ``current_scene.location``/``time``/``situation``, or a section text's ``Current
scene:`` notes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from console.storable import loads as loads_json
from roleplay.prompting.director_state import split_sections

MAX_QUERY = 8000
SCENE_SECTION = "Current scene"
SCENE_FIELDS = ("location", "time", "situation")
_BLANKS = re.compile(r"\s+")


def json_fields(text: str | None) -> dict[str, Any]:
    """The state's fields when its text is a JSON object; else none."""
    if not text or not text.lstrip().startswith("{"):
        return {}
    try:
        value = loads_json(text, "state")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def agentic_view(revision: int, text: str | None) -> dict[str, Any]:
    """``{revision, sections}`` of Agent V2's state in force."""
    sections = {
        label: notes for label, notes in split_sections(text or "") if label is not None and notes
    }
    return {"revision": revision, "sections": sections}


def story_view(revision: int, envelope: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The public part of the Story in force (None before it is initialised)."""
    world = (envelope or {}).get("world")
    if not isinstance(world, dict) or not isinstance(world.get("foreground"), dict):
        return None
    foreground = world["foreground"]
    event = envelope.get("event") if envelope is not None else None
    pending = (envelope or {}).get("pendingActor")
    prepared = pending.get("prepared") if isinstance(pending, dict) else None
    flags = prepared.get("flags") if isinstance(prepared, dict) else None
    return {
        "revision": revision,
        "round": world.get("round", 0),
        "event": event.get("id") if isinstance(event, dict) else None,
        "foreground": {key: foreground.get(key) for key in ("id", "title", "phase")},
        "flags": {
            "interrupted": bool((flags or {}).get("interrupted")),
            "switchedTo": (flags or {}).get("switchedTo"),
        },
    }


def turn_state(
    agent_text: str | None,
    agentic: Mapping[str, Any] | None = None,
    story: Mapping[str, Any] | None = None,
    variables: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The selection's ``state`` (see the module doc)."""
    state = json_fields(agent_text)
    for name, value in (("agentic", agentic), ("story", story), ("vars", variables)):
        if value:
            state[name] = dict(value)
    return state


def scene_text(agent_text: str | None) -> str:
    """The public scene of Agent V2's state, on one line ("" when it has none)."""
    fields = json_fields(agent_text)
    if fields:
        scene = fields.get("current_scene")
        if not isinstance(scene, dict):
            return ""
        parts = [scene.get(name) for name in SCENE_FIELDS]
        return _one_line("; ".join(p for p in parts if isinstance(p, str) and p.strip()))
    for label, notes in split_sections(agent_text or ""):
        if label == SCENE_SECTION:
            return _one_line(notes)
    return ""


def query(text: str, scene: str) -> str:
    """The selection's query: the turn's text, then the scene, within :data:`MAX_QUERY`."""
    joined = f"{text}\n{scene}" if text and scene else text or scene
    return joined[:MAX_QUERY] or "…"


def _one_line(text: str) -> str:
    return _BLANKS.sub(" ", text).strip()
