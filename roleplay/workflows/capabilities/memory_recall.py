"""``memory_recall``: the player's memory that best matches the query, by the memory's own
recall (``memory.recall.search.recall``, the search the pre-turn memory pack runs): the
player's messages (each with its neighbours) and active memory entries, filtered in SQL by
tenant, player and the conversation's character, with this conversation's session entries.

Input ``{query?, limit?, kinds?}``: the node's query, else the player's words; at most
``limit`` items (5; 1–50). Value ``{query, items: [{kind, id, text, score, …}], degraded,
runtime}``; prompt content: each item's text on its own line. A scenario whose
``memoryRuntime`` is ``off`` (no memory) or ``external`` (the memory is another service's)
recalls nothing here.
"""

from __future__ import annotations

import asyncio
from typing import Any

from console.db import run_db
from memory.recall import search
from roleplay.models import Scenario
from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityValue

from .base import Scoped, checked_input, clipped, conversation_of, query_of

NAME = "memory_recall"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "maxLength": 2000},
        "limit": {"type": "integer", "minimum": 1, "maximum": search.MAX_K, "default": 5},
        "kinds": {
            "type": "array",
            "items": {"enum": list(search.KINDS)},
            "minItems": 1,
            "uniqueItems": True,
        },
    },
    "additionalProperties": False,
}


def _runtime(conversation, scenario_id) -> str:
    """The scenario's memory runtime (``internal`` without a scenario)."""
    found = (
        Scenario.objects.filter(tenant_id=conversation.tenant_id, pk=scenario_id)
        .values_list("memory_runtime", flat=True)
        .first()
    )
    return found or "internal"


def _recall(conversation, scenario_id, query: str, limit: int, kinds) -> dict[str, Any]:
    runtime = _runtime(conversation, scenario_id) if scenario_id else "internal"
    if runtime != "internal":  # "off": no memory; "external": it lives in another service
        return {"query": query, "items": [], "degraded": False, "runtime": runtime}
    found = search.recall(
        conversation.tenant,
        conversation.player,
        search.RecallQuery(
            query=query,
            k=limit,
            character_id=str(conversation.character_id),
            for_conversation=str(conversation.session_id),
            kinds=tuple(kinds or search.KINDS),
        ),
    )
    return {
        "query": query,
        "items": found["items"],
        "degraded": found["degraded"],
        "runtime": runtime,
    }


class MemoryRecall(Scoped):
    name = NAME
    input_schema = SCHEMA

    async def execute(self, call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        given = checked_input(SCHEMA, call.input)
        query = query_of(call, given.get("query"))
        if not query.strip():
            return CapabilityValue(value={"query": "", "items": [], "degraded": False})
        conversation = await conversation_of(self.scope)
        value = await run_db(
            _recall, conversation, self.scope.scenario_id, query, given["limit"], given.get("kinds")
        )
        text = "\n".join(f"- {item['text']}" for item in value["items"] if item.get("text"))
        return CapabilityValue(value=value, prompt_content=clipped(text) or None)


registry.register(
    NAME,
    MemoryRecall,
    description="Recall the player's memory (messages and memory entries) that best matches "
    "the query (the player's words by default).",
    input_schema=SCHEMA,
)
