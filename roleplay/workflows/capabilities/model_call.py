"""``model_call``: one model call with a named role prompt of a model config's preset (the
way Agent V2's and the front loop's role models are prompted, ``presets.roles.role_system``),
recorded as a ``ModelCall`` row (purpose ``workflow``) of the turn.

Input ``{modelConfigId, rolePrompt, input?, emitPrompt?, maxTokens?}``:

- ``modelConfigId``: a model config of the tenant, by id or name; ``rolePrompt``: the name
  of a prompt of its preset (else the shipped default preset), the call's system message,
  its macros expanded with the variables below;
- ``input``: the user message, a template whose ``{{getvar::query}}`` is the player's words
  and ``{{getvar::<node id>}}`` a completed dependency's result (its prompt content, else
  its value as JSON); without it, each dependency's result under its node id, then the
  player's words;
- ``emitPrompt`` (true): the reply is the node's prompt content, for the Actor.

Value ``{text, model}``. Codes: ``bad_input``, ``model_config_missing`` (no such config,
or its preset has no such prompt), and the gateway's own (``timeout``, ``cancelled`` …).
"""

from __future__ import annotations

import asyncio
from typing import Any

from console.db import run_db
from console.models import Tenant
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest
from roleplay.presets.roles import RoleUnavailable, role_system
from roleplay.prompting.macros import MacroContext, expand_macros
from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityError, CapabilityValue

from .base import Scoped, checked_input, clipped, output_text

NAME = "model_call"
PURPOSE = "workflow"
MISSING = "model_config_missing"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "modelConfigId": {"type": "string", "minLength": 1, "maxLength": 200},
        "rolePrompt": {"type": "string", "minLength": 1, "maxLength": 100},
        "input": {"type": "string", "maxLength": 20_000},
        "emitPrompt": {"type": "boolean", "default": True},
        "maxTokens": {"type": "integer", "minimum": 1, "maximum": 32_768},
    },
    "required": ["modelConfigId", "rolePrompt"],
    "additionalProperties": False,
}


def _variables(call: CapabilityCall) -> dict[str, str]:
    variables = {node_id: output_text(out) for node_id, out in call.dependencies.items()}
    variables["query"] = call.query
    return variables


def _user_text(template: str | None, variables: dict[str, str], call: CapabilityCall) -> str:
    if template:
        return expand_macros(template, MacroContext(variables=variables)).text
    parts = [f"[{node_id}]\n{variables[node_id]}" for node_id in call.dependencies]
    parts.append(f"[player]\n{call.query}")
    return "\n\n".join(parts)


def _prepared(scope: registry.RunScope, given: dict[str, Any], variables: dict[str, str]):
    """(tenant, model config, system prompt), read on the database thread."""
    tenant = Tenant.objects.get(pk=scope.tenant_id)
    ref = given["modelConfigId"]
    config = model_configs_by_ref(scope.tenant_id, [ref]).get(ref)
    if config is None:
        raise CapabilityError(MISSING, f"no model config {ref!r} in this tenant")
    try:
        system = role_system(config, given["rolePrompt"], variables)
    except RoleUnavailable as exc:
        raise CapabilityError(MISSING, f"model config {config.name!r}: {exc.message}") from None
    return tenant, config, system


class ModelCallCapability(Scoped):
    name = NAME
    input_schema = SCHEMA

    async def execute(self, call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        given = checked_input(SCHEMA, call.input)
        variables = _variables(call)
        tenant, config, system = await run_db(_prepared, self.scope, given, variables)
        user = _user_text(given.get("input"), variables, call)
        gateway = Gateway(tenant, config, PURPOSE, turn_id=self.scope.turn_id, run_db=run_db)
        request = ModelRequest(
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            max_tokens=given.get("maxTokens"),
        )
        try:
            result = await gateway.complete(request, cancel)
        except ModelError as exc:
            raise CapabilityError(exc.code, exc.message) from None
        text = result.content.strip()
        prompt = clipped(text) if given["emitPrompt"] and text else None
        return CapabilityValue(value={"text": text, "model": result.model}, prompt_content=prompt)


registry.register(
    NAME,
    ModelCallCapability,
    description="Call a model config with a named role prompt of its preset; the reply can "
    "be given to the Actor (emitPrompt).",
    input_schema=SCHEMA,
)
