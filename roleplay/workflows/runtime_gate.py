"""A node's gate: a model asked once, before the loop, whether the loop should run at all
(the seed's ``gate``, 002 line 1399), with the node's ``gate.systemPrompt``, the history and
the player's words. It must answer one JSON object ``{run, reason?, confidence?}``; its own
latency is added as ``latencyMs``. The runtime validates the answer strictly: an answer
that is not such an object fails the run (``gate_invalid``), a model error too
(``gate_failed``); ``run: false`` skips the loop. Its call is a ``ModelCall`` with purpose
``workflow_runtime_gate``: the gate's cost is recorded even when the loop makes no call.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from console.db import run_db
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest
from roleplay.workflows.engine.runtime import Gate, RunContext
from roleplay.workflows.runtime_model import json_object_in

PURPOSE = "workflow_runtime_gate"
MAX_TOKENS = 200

GATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "systemPrompt": {"type": "string", "minLength": 1, "maxLength": 20_000},
        "modelConfigId": {"type": "string", "minLength": 1, "maxLength": 100},
    },
    "required": ["systemPrompt"],
    "additionalProperties": False,
}


def model_gate(tenant: Any, config: Any, system: str, turn_id: Any = None) -> Gate:
    async def gate(context: RunContext, cancel: asyncio.Event) -> Any:
        gateway = Gateway(tenant, config, PURPOSE, turn_id=turn_id, run_db=run_db)
        messages = [
            {"role": "system", "content": system},
            *({"role": m["role"], "content": m["content"]} for m in context.history),
            {"role": "user", "content": context.input},
        ]
        request = ModelRequest(
            messages, response_format={"type": "json_object"}, max_tokens=MAX_TOKENS
        )
        started = time.perf_counter()
        result = await gateway.complete(request, cancel)
        answer = json_object_in(result.content)
        if answer is None:
            return result.content  # not an object: the runtime refuses it (gate_invalid)
        answer.setdefault("latencyMs", round((time.perf_counter() - started) * 1000.0, 1))
        return answer

    return gate
