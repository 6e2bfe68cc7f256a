"""The scripted model server's answers for ``bench_continuity``: every role carries forward,
honestly, the fact markers it is given (``FACT-…``) and nothing else.

- the compactor keeps every marker of the messages and the earlier summary it folds (never
  those of the latest message, which is context only);
- the Director writes a valid state listing the markers of its materials (the state it
  read, the recent dialogue, the user's latest message), so the state keeps what it was
  told and drops nothing;
- the orchestrator picks ``manage_callbacks`` then the Director; a specialist repeats the
  markers of its materials as an open thread;
- the Actor answers with a fixed reply that holds no marker.
"""

from __future__ import annotations

import json
import re

from roleplay.bench.agentic import ROLE_MODELS, _phase, _tool_call
from roleplay.llm.scripted_server import Reply
from roleplay.prompting.director_state import DIRECTOR_STATE_HEADER, DIRECTOR_STATE_SECTIONS

FACT = re.compile(r"FACT-[A-Z]+-[A-Z0-9]+")
COMPACTOR_MARK = "You compress the older part"
ACTOR_REPLY = (
    "The keeper nods, sets the lamp on the sill and listens to the tide for a while "
    "before answering. " * 4
)


def markers(text: str) -> list[str]:
    return list(dict.fromkeys(FACT.findall(text)))


def _compactor(request: dict) -> Reply:
    user = request["messages"][1]["content"]
    try:
        data = json.loads(user)
        folded = json.dumps([data.get("earlier_summary"), data.get("messages")])
    except ValueError:
        folded = user.split("LATEST USER MESSAGE")[0]
    body = {
        "canonical": markers(folded) or ["small talk only"],
        "interaction": [],
        "open_threads": [],
    }
    return Reply(content=json.dumps(body))


def _state(facts: list[str]) -> str:
    lines = [f"{section}: kept." for section in DIRECTOR_STATE_SECTIONS]
    if facts:
        lines[0] = f"{DIRECTOR_STATE_SECTIONS[0]}: " + "; ".join(facts) + "."
    return DIRECTOR_STATE_HEADER + "\n" + "\n".join(lines)


def route(request: dict) -> Reply:
    model = request.get("model")
    messages = request.get("messages") or []
    material = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    if model == ROLE_MODELS["orchestrator"]:
        call = (
            _tool_call("manage_callbacks", "keep the user's facts")
            if _phase(request) == 1
            else _tool_call("update_director_state", "record the facts")
        )
        return Reply(tool_calls=[call], finish_reason="tool_calls")
    if model == ROLE_MODELS["specialist"]:
        found = markers(material)
        return Reply(content="Open: " + (", ".join(found) or "nothing new"))
    if model == ROLE_MODELS["director"]:
        return Reply(content=_state(markers(material)))
    if messages and COMPACTOR_MARK in str(messages[0].get("content")):
        return _compactor(request)
    return Reply(content=ACTOR_REPLY, chunks=8)


def continuity_reply() -> Reply:
    return Reply.from_callable(route)
