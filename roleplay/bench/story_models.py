"""The scripted model server's Story answers for ``bench_story --turns-live``: every
JSON-schema call of Story answered at once with a valid answer read off the request's own
material (the next scene named when the current one ends, the first open goal completed
with the event's first reply as evidence), so the story keeps moving turn after turn; the
Actor gets the benchmark's fixed reply."""

from __future__ import annotations

import json
import re

from roleplay.bench.workload import bench_reply
from roleplay.llm.scripted_server import Reply

INIT = {
    "foreground": {"title": "the keeper trims the lamp"},
    "backgrounds": [
        {"title": f"a ship {n} signals from the reef", "owner": "sailors", "countdown": 6 + n}
        for n in range(3)
    ],
    "undercurrents": [
        {"title": f"a rumour {n} spreads in the harbour", "owner": "harbour folk"} for n in range(4)
    ],
    "seeds": [{"title": f"a stranger {n} arrives", "owner": "travellers"} for n in range(6)],
    "main": {"theme": "the lost ship", "direction": "find the ship", "expected": "discovery"},
    "sub": {"theme": "trust", "direction": "earn the keeper's trust", "expected": "warmth"},
}
PLAN = {
    "goals": [
        {"ref": "a", "serves": "main", "angle": "reveal", "gist": "the ship's name is found"},
        {"ref": "b", "serves": "main", "angle": "conflict", "gist": "the harbour master objects"},
        {"ref": "c", "serves": "sub", "angle": "relationship", "gist": "the keeper opens up"},
        {"ref": "d", "serves": "sub", "angle": "character", "gist": "the keeper's past"},
        {
            "ref": "e",
            "serves": "main",
            "angle": "reward",
            "gist": "a chart",
            "prerequisites": ["a"],
        },
    ]
}
_PART = re.compile(r"\[([A-Z_]+)\]\n(.*?)(?=\n\n\[[A-Z_]+\]\n|\Z)", re.S)


def _parts(text: str) -> dict:
    found = {}
    for label, body in _PART.findall(text):
        try:
            found[label] = json.loads(body)
        except ValueError:
            found[label] = body
    return found


def _advance(parts: dict) -> dict:
    answer: dict = {"consequences": ["the lamp's light sweeps the reef"]}
    phase = ((parts.get("STAGE") or {}).get("stage") or {}).get("event", {}).get("phase")
    if phase == "end":
        candidates = [i["id"] for i in parts.get("INJECTIONS") or [] if "id" in i]
        candidates += [c["id"] for c in parts.get("SUCCESSOR_CANDIDATES") or []]
        if candidates:
            answer["nextForeground"] = candidates[0]
    return answer


def _settle(parts: dict) -> dict:
    replies = [e["message_id"] for e in parts.get("EVENT") or [] if e.get("kind") == "prose"]
    goals = [g["id"] for g in parts.get("GOALS") or [] if g.get("angle") != "reward"]
    if not replies:
        return {"outcome": "unknown"}
    return {
        "outcome": "settled",
        "completedGoals": [{"id": goals[0], "evidence": replies[:1]}] if goals else [],
        "progress": {"main": {"advance": True, "evidence": replies[:1]}},
        "direction": None,
    }


def route(request: dict) -> Reply:
    name = ((request.get("response_format") or {}).get("json_schema") or {}).get("name")
    if name is None:
        return bench_reply()
    parts = _parts(request["messages"][1]["content"])
    answer = {
        "story_init": lambda: INIT,
        "story_action": lambda: {"kind": "normal", "targetId": None},
        "story_plan": lambda: PLAN,
        "story_advance": lambda: _advance(parts),
        "story_settle": lambda: _settle(parts),
        "story_rebranch": lambda: {"theme": "t", "direction": "d", "expected": "e"},
    }[name]()
    return Reply(content=json.dumps(answer), usage={})


def story_reply() -> Reply:
    return Reply.from_callable(route)
