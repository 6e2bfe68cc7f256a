"""A ``bounded_runtime`` node's input, and the runtime it makes for one run's scope.

The node input: ``{modelConfigId, rolePrompt? | systemPrompt? (exactly one), tools:
[capability names], limits?, stateKey?, commitState?, stateSchema?, emitPrompt?,
historyMessages? (0–50, default 20), gate? ({systemPrompt, modelConfigId?}), mode?,
pricing?}``.
``tools`` are built through the registry for the same ``RunScope`` as the node (so a tool
sees this conversation and nothing wider); ``bounded_runtime`` itself is not a tool. The
results of the node's completed dependencies follow the system prompt (``earlier_steps``).

What is saved: with ``commitState``, the model's final answer must be a JSON object (a
```` ```json ```` fence around it is accepted); it is the state candidate when it also
passes ``stateSchema`` (when given): the operator's whitelist. Anything else leaves the
state unchanged (``prepare_commit`` answers None) — arbitrary text never becomes state.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from console.db import run_db
from memory.selectors import get_history
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.presets.roles import RoleUnavailable, role_system
from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import (
    Capability,
    CapabilityCall,
    CapabilityError,
    NodeOutput,
)
from roleplay.workflows.engine.runtime import (
    LimitsError,
    RunContext,
    SlowTurnRuntime,
    StateCandidate,
    limits_from,
)
from roleplay.workflows.engine.runtime.tools import plain
from roleplay.workflows.runtime_gate import GATE_SCHEMA, model_gate
from roleplay.workflows.runtime_model import GatewayModel, json_object_in
from roleplay.workflows.runtime_store import DEFAULT_KEY, ConversationStateStore

NAME = "bounded_runtime"
MODES = ("slow", "fast+slow")
MAX_TOOLS = 16
HISTORY_ROLES = ("user", "assistant", "system")
DEFAULT_HISTORY = 20
MAX_DEPENDENCY_CHARS = 4_000

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "modelConfigId": {"type": "string", "minLength": 1, "maxLength": 100},
        "rolePrompt": {"type": "string", "minLength": 1, "maxLength": 100},
        "systemPrompt": {"type": "string", "minLength": 1, "maxLength": 20_000},
        "tools": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 100},
            "maxItems": MAX_TOOLS,
            "uniqueItems": True,
        },
        "limits": {"type": "object"},
        "stateKey": {"type": "string", "pattern": r"^[A-Za-z0-9_.:-]{1,100}$"},
        "commitState": {"type": "boolean"},
        "stateSchema": {"type": "object"},
        "emitPrompt": {"type": "boolean"},
        "historyMessages": {"type": "integer", "minimum": 0, "maximum": 50},
        "gate": GATE_SCHEMA,
        "mode": {"enum": list(MODES)},
        "pricing": {
            "type": "object",
            "properties": {
                "inputUsdPerMillion": {"type": "number", "minimum": 0, "maximum": 10_000},
                "outputUsdPerMillion": {"type": "number", "minimum": 0, "maximum": 10_000},
            },
            "required": ["inputUsdPerMillion", "outputUsdPerMillion"],
            "additionalProperties": False,
        },
    },
    "required": ["modelConfigId", "tools"],
    "oneOf": [{"required": ["rolePrompt"]}, {"required": ["systemPrompt"]}],
    "additionalProperties": False,
}
_VALIDATOR = Draft202012Validator(INPUT_SCHEMA)


def check_input(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The node input, valid, or ``bad_input`` naming the field."""
    raw = plain(raw)
    errors = sorted(_VALIDATOR.iter_errors(raw), key=str)
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
        message = errors[0].message
        if errors[0].validator == "oneOf":
            message = "give exactly one of rolePrompt and systemPrompt"
        raise CapabilityError("bad_input", f"{where}: {message}")
    node = dict(raw)
    try:
        limits_from(node.get("limits"))
    except LimitsError as exc:
        raise CapabilityError("bad_input", str(exc)) from None
    if NAME in node["tools"]:
        raise CapabilityError("bad_input", "tools: the runtime cannot be its own tool")
    missing = sorted(set(node["tools"]) - registry.registered())
    if missing:
        raise CapabilityError("bad_input", f"tools: not registered: {', '.join(missing)}")
    if "stateSchema" in node:
        try:
            Draft202012Validator.check_schema(node["stateSchema"])
        except SchemaError as exc:
            raise CapabilityError("bad_input", f"stateSchema: {exc.message}") from None
    return node


@dataclass(frozen=True)
class _Described:
    """A registered capability with its registry description, for the tool definition."""

    inner: Capability
    description: str

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return self.inner.input_schema

    async def execute(self, call: CapabilityCall, cancel):
        return await self.inner.execute(call, cancel)


def tools_for(names: Sequence[str], scope: registry.RunScope) -> list[Capability]:
    built: list[Capability] = []
    for name in names:
        entry = registry.entry(name)
        if entry is None:
            raise CapabilityError("bad_input", f"tools: not registered: {name}")
        built.append(_Described(registry.build(name, scope), entry.description))
    return built


@dataclass(frozen=True)
class ModelSide:
    tenant: Any
    config: Any  # the loop's ModelConfig
    system: str
    gate_config: Any = None  # the gate's, when the node has a gate


def _model_side(tenant_id: Any, node: Mapping[str, Any]) -> ModelSide:
    """The node's model configs and system prompt, read on a database thread."""
    ref = node["modelConfigId"]
    gate_ref = (node.get("gate") or {}).get("modelConfigId") or ref
    configs = model_configs_by_ref(tenant_id, [ref, gate_ref])
    for wanted in (ref, gate_ref) if "gate" in node else (ref,):
        if wanted not in configs:
            raise CapabilityError("model_config_missing", f"no model config {wanted!r}")
    config = configs[ref]
    gate_config = configs[gate_ref] if "gate" in node else None
    if "systemPrompt" in node:
        return ModelSide(config.tenant, config, node["systemPrompt"], gate_config)
    try:
        system = role_system(config, node["rolePrompt"], {})
    except RoleUnavailable as exc:
        raise CapabilityError("model_config_missing", exc.message) from None
    return ModelSide(config.tenant, config, system, gate_config)


def commit_rule(node: Mapping[str, Any]):
    """``prepare_commit`` for the node: the module doc's rule, or None (analysis only)."""
    if not node.get("commitState"):
        return None
    schema = node.get("stateSchema")
    validator = Draft202012Validator(schema) if schema is not None else None

    def prepare(final, tool_results, context) -> StateCandidate | None:
        state = json_object_in(final.get("content") or "")
        if state is None or (validator is not None and not validator.is_valid(state)):
            return None
        tools = tuple(r["name"] for r in tool_results if r.get("status") == "ok")
        return StateCandidate(state, tools_called=tools)

    return prepare


def _clean(items: Any) -> list[dict[str, str]]:
    return [
        {"role": item["role"], "content": item["content"]}
        for item in items or ()
        if isinstance(item, Mapping)
        and item.get("role") in HISTORY_ROLES
        and isinstance(item.get("content"), str)
        and item["content"].strip()
    ]


def _stored_history(tenant_id: Any, session_id: str, limit: int) -> list[dict[str, str]]:
    rows = get_history(tenant_id, session_id, limit=limit + 1)
    return _clean({"role": m.role, "content": m.content} for m in rows)


async def history_for(
    scope: registry.RunScope, node: Mapping[str, Any], query: str
) -> list[dict[str, str]]:
    """The turn's history, at most ``historyMessages`` (default 20) items: the scope's
    ``extra["history"]`` when the caller gave one, else the conversation's stored messages
    (``extra["session_id"]``). The player's message of this turn, when already stored, is
    left out (it is the run's input)."""
    limit = node.get("historyMessages", DEFAULT_HISTORY)
    if "history" in scope.extra:
        items = _clean(scope.extra["history"])
    elif scope.extra.get("session_id") and limit:
        items = await run_db(_stored_history, scope.tenant_id, scope.extra["session_id"], limit)
    else:
        items = []
    if items and items[-1]["role"] == "user" and items[-1]["content"] == query:
        items = items[:-1]
    return items[-limit:] if limit else []


def earlier_steps(dependencies: Mapping[str, NodeOutput]) -> str:
    """The completed dependencies' results, for the system prompt: each node's prompt
    content, else its value as JSON, clipped to :data:`MAX_DEPENDENCY_CHARS`."""
    lines = []
    for node_id, output in dependencies.items():
        result = output.result
        text = result.prompt_content
        if not text:
            text = json.dumps(plain(result.value), ensure_ascii=False, default=str)
        if len(text) > MAX_DEPENDENCY_CHARS:
            text = text[: MAX_DEPENDENCY_CHARS - 1] + "…"
        lines.append(f"[{node_id}]\n{text}")
    return "Results of the earlier steps of this workflow:\n" + "\n\n".join(lines) if lines else ""


async def runtime_for(
    node: Mapping[str, Any], scope: registry.RunScope, earlier: str = ""
) -> tuple[SlowTurnRuntime, ConversationStateStore]:
    """The runtime a node runs, and its state store; ``earlier`` (the dependencies'
    results) follows the system prompt."""
    side = await run_db(_model_side, scope.tenant_id, node)
    system = f"{side.system}\n\n{earlier}" if earlier else side.system
    gate = None
    if side.gate_config is not None:
        gate = model_gate(
            side.tenant, side.gate_config, node["gate"]["systemPrompt"], scope.turn_id
        )
    store = ConversationStateStore(
        scope.tenant_id, scope.conversation_id, node.get("stateKey") or DEFAULT_KEY
    )
    runtime = SlowTurnRuntime(
        GatewayModel(side.tenant, side.config, turn_id=scope.turn_id, pricing=node.get("pricing")),
        system,
        tools_for(node["tools"], scope),
        state=store,
        limits=limits_from(node.get("limits")),
        gate=gate,
        prepare_commit=commit_rule(node),
    )
    return runtime, store


def context_for(query: str, history: list[dict[str, str]], scope: registry.RunScope) -> RunContext:
    return RunContext(input=query, history=history, request_id=str(scope.turn_id or ""))
