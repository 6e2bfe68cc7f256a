"""``roleplay.worldbook_plugin.state``: the turn's ``state`` and query, from plain values."""

from __future__ import annotations

import json

from roleplay.worldbook_plugin import state as ws


def test_json_fields_only_for_a_json_object():
    assert ws.json_fields('{"quest": {"started": true}}') == {"quest": {"started": True}}
    for text in (None, "", "[1, 2]", '"text"', "[Agentic RP State]\nCurrent scene: x", "{oops"):
        assert ws.json_fields(text) == {}


def test_the_hosts_names_replace_same_named_state_fields():
    text = json.dumps({"story": "mine", "vars": 1, "agentic": 2, "mood": "calm"})
    state = ws.turn_state(text, {"revision": 4, "sections": {}}, {"round": 1}, {"language": "en"})
    assert state == {
        "story": {"round": 1},
        "vars": {"language": "en"},
        "agentic": {"revision": 4, "sections": {}},
        "mood": "calm",
    }
    assert ws.turn_state(None) == {}  # nothing to add: no names at all
    assert ws.turn_state(text, None, None, {}) == json.loads(text)


def test_the_story_view_keeps_hidden_matters_out():
    envelope = {
        "world": {
            "foreground": {"id": "w1", "title": "Gate", "phase": "start", "developRounds": 0},
            "undercurrents": [{"id": "w2", "title": "A plot", "owner": "Rook", "stage": 2}],
            "round": 0,
        },
        "event": {"id": "e1"},
        "pendingActor": None,
    }
    view = ws.story_view(2, envelope)
    assert view == {
        "revision": 2,
        "round": 0,
        "event": "e1",
        "foreground": {"id": "w1", "title": "Gate", "phase": "start"},
        "flags": {"interrupted": False, "switchedTo": None},
    }
    assert ws.story_view(0, None) is None and ws.story_view(1, {"world": {}}) is None


def test_the_scene_and_the_query():
    json_state = json.dumps({"current_scene": {"time": " dusk ", "location": "the gate"}})
    assert ws.scene_text(json_state) == "the gate; dusk"
    assert ws.scene_text(json.dumps({"current_scene": "a string"})) == ""
    text = "[Agentic RP State]\nCurrent scene:  The gate,\n\tin rain.\nScene focus: the key"
    assert ws.scene_text(text) == "The gate, in rain."
    assert ws.scene_text(None) == "" and ws.scene_text("no sections") == ""
    assert ws.query("Hello", "The gate") == "Hello\nThe gate"
    assert ws.query("", "The gate") == "The gate" and ws.query("", "") == "…"
    long = ws.query("x" * 7990, "y" * 100)
    assert len(long) == ws.MAX_QUERY and long.startswith("x" * 7990)
