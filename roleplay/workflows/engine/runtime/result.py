"""The runtime's answer: ``status`` ``completed`` or ``failed`` (a failure is a result, not
an exception: a caller checks ``status``), the final reply when there is one, every tool
call's result, the usage totals, the loop's model calls, the gate's result and what
happened to the state (``committed``, ``unchanged``, ``stale_write_rejected``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from console.failures import BadGateway

Status = Literal["completed", "failed"]
StateOutcome = Literal["committed", "unchanged", "stale_write_rejected"]


class RuntimeFailure(BadGateway):
    """Ends a run as ``failed`` with a stable ``code``. The run returns it as its result;
    raised further (a caller that re-raises it), it is the product's one coded error."""

    default_code = "runtime_failed"


@dataclass
class RuntimeResult:
    status: Status
    final: dict[str, Any] | None = None  # {content, model}
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    calls: int = 0  # the loop's model calls (the gate's own calls are the host's to count)
    tool_calls: int = 0
    gate: dict[str, Any] | None = None
    state_outcome: StateOutcome = "unchanged"
    revision: int | None = None  # the revision read at the start; the new one once committed
    error: dict[str, str] | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "final": self.final,
            "toolResults": self.tool_results,
            "usage": self.usage,
            "calls": self.calls,
            "toolCalls": self.tool_calls,
            "gate": self.gate,
            "stateOutcome": self.state_outcome,
            "revision": self.revision,
            "error": self.error,
        }
