"""``state_read``: the conversation's Story and Agent V2 state under its scenario, read only
(``story.selectors.read_for_turn``, ``agent_state.read_state``: what a turn starts from).

Input ``{parts?: ["story", "agent"]}`` (both by default). Value ``{story: {revision,
envelope} | null, agent: {revision, state, …} | null}``; prompt content: the Agent V2 state
text and the Story's stage, when there are any (a node that only feeds others sets
``projectTo: "none"``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from console.db import run_db
from roleplay.agentic.services.agent_state import read_state
from roleplay.models import Scenario
from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityValue
from story import selectors as story_reads

from .base import Scoped, checked_input, clipped, conversation_of

NAME = "state_read"
PARTS = ("story", "agent")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "parts": {
            "type": "array",
            "items": {"enum": list(PARTS)},
            "minItems": 1,
            "uniqueItems": True,
            "default": list(PARTS),
        },
    },
    "additionalProperties": False,
}


def _read(conversation, scenario_id, parts) -> dict[str, Any]:
    value: dict[str, Any] = {"story": None, "agent": None}
    scenario = Scenario.objects.filter(tenant_id=conversation.tenant_id, pk=scenario_id).first()
    if scenario is None:
        return value
    if "story" in parts:
        revision, envelope = story_reads.read_for_turn(conversation.pk, scenario.pk)
        value["story"] = {"revision": revision, "envelope": envelope} if revision else None
    if "agent" in parts:
        snapshot = read_state(conversation, scenario, active_ledger=20)
        value["agent"] = snapshot.as_read() if snapshot.found else None
    return value


def _prompt(value: dict[str, Any]) -> str:
    lines = []
    agent = value.get("agent")
    if agent and agent.get("state"):
        lines.append(f"[STATE]\n{agent['state']}")
    story = value.get("story")
    if story and story.get("envelope"):
        narrative = (story["envelope"] or {}).get("narrative")
        if narrative:
            lines.append("[STORY]\n" + json.dumps(narrative, ensure_ascii=False, default=str))
    return clipped("\n\n".join(lines))


class StateRead(Scoped):
    name = NAME
    input_schema = SCHEMA

    async def execute(self, call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        given = checked_input(SCHEMA, call.input)
        conversation = await conversation_of(self.scope)
        value = await run_db(_read, conversation, self.scope.scenario_id, given["parts"])
        return CapabilityValue(value=value, prompt_content=_prompt(value) or None)


registry.register(
    NAME,
    StateRead,
    description="Read the conversation's Story and Agent V2 state (read only).",
    input_schema=SCHEMA,
)
