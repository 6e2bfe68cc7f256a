"""What the runtime's database tests share: a registered capability the runtime may call
as a tool (registered for one test, then removed), and a run scope for a conversation."""

from __future__ import annotations

from contextlib import contextmanager

from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityValue

QUERY = "I hand over the copper key."
HISTORY = [{"role": "assistant", "content": "Lia waits by the gate for the key."}]


class GateRules:
    """A registered capability the runtime may call: the gate's rules for a topic."""

    name = "test_gate_rules"
    input_schema = {
        "type": "object",
        "properties": {"topic": {"type": "string", "enum": ["gate", "bridge"]}},
        "required": ["topic"],
        "additionalProperties": False,
    }
    calls: list = []

    def __init__(self, scope: registry.RunScope) -> None:
        self.scope = scope

    async def execute(self, call: CapabilityCall, cancel) -> CapabilityValue:
        GateRules.calls.append((self.scope.conversation_id, dict(call.input), call.query))
        return CapabilityValue({"rule": "Only the captain's key opens the north gate."})


@contextmanager
def registered_gate_rules():
    registry.register(
        GateRules.name,
        GateRules,
        description="The rules of a gate.",
        input_schema=GateRules.input_schema,
    )
    GateRules.calls = []
    try:
        yield GateRules
    finally:
        registry._REGISTRY.pop(GateRules.name, None)


def scope_of(conversation, extra=None) -> registry.RunScope:
    return registry.RunScope(
        tenant_id=conversation.tenant_id,
        conversation_id=conversation.pk,
        scenario_id=None,
        player_id=conversation.player_id,
        turn_id=None,
        extra={"history": HISTORY} if extra is None else extra,
    )
