"""The bounded runtime's model over the product's gateway: each loop step is one gateway
call with the runtime's messages and tool definitions (retries and the recorded
``ModelCall`` row with purpose ``workflow_runtime`` included, like every model call).

The gateway already parses tool-call arguments (a reply with malformed JSON arguments is a
bad response, retried, then a ``model_error``); usage is what the server reported, else
counted with cl100k. Model configs carry no prices: a node prices its calls with
``pricing: {inputUsdPerMillion, outputUsdPerMillion}``; without it ``cost_usd`` is None, and
a node that sets ``maxCostUsd`` fails with ``usage_missing`` rather than running unpriced.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from console.db import run_db
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest as GatewayRequest
from roleplay.workflows.engine.runtime import ModelReply, ModelRequest, ToolRequest, Usage

PURPOSE = "workflow_runtime"


@dataclass
class GatewayModel:
    """``Model`` for the runtime: one tenant's model config, one turn's calls."""

    tenant: Any
    config: Any  # roleplay.models.ModelConfig
    turn_id: Any = None
    purpose: str = PURPOSE
    pricing: Mapping[str, float] | None = None
    call_ids: list[str] = field(default_factory=list)

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        if self.pricing is None:
            return None
        per_input = self.pricing["inputUsdPerMillion"]
        per_output = self.pricing["outputUsdPerMillion"]
        return (input_tokens * per_input + output_tokens * per_output) / 1_000_000

    async def complete(self, request: ModelRequest, cancel: asyncio.Event) -> ModelReply:
        gateway = Gateway(
            self.tenant, self.config, self.purpose, turn_id=self.turn_id, run_db=run_db
        )
        sent = GatewayRequest(
            request.messages,
            tools=request.tools or None,
            timeout=max(request.timeout_s, 0.001),
        )
        try:
            result = await gateway.complete(sent, cancel)
        finally:
            self.call_ids.extend(gateway.call_ids)
        return ModelReply(
            content=result.content,
            tool_calls=tuple(ToolRequest(c.id, c.name, c.arguments) for c in result.tool_calls),
            usage=Usage(
                result.usage.input_tokens,
                result.usage.output_tokens,
                self.cost(result.usage.input_tokens, result.usage.output_tokens),
            ),
            model=result.model,
        )


def json_object_in(text: str) -> dict[str, Any] | None:
    """The JSON object a model answered (bare, or in a ```` ```json ```` fence); None when
    the answer is not one."""
    fenced = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", text, flags=re.S)
    body = fenced.group(1) if fenced else text
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
