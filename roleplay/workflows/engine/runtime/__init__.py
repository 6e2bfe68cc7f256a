"""The bounded model-and-tool runtime (the seed's ``SlowTurnRuntime``): pure, with its
model, tools and state store as ports. See ``loop`` for the run, ``limits`` for the budget,
``gate`` for the optional gate, ``tools`` for argument validation."""

from .gate import Gate
from .limits import Limits, LimitsError, limits_from
from .loop import PrepareCommit, SlowTurnRuntime
from .ports import (
    Model,
    ModelReply,
    ModelRequest,
    RunContext,
    StateCandidate,
    StateSnapshot,
    StateStore,
    ToolRequest,
    Usage,
)
from .result import RuntimeFailure, RuntimeResult

__all__ = [
    "Gate",
    "Limits",
    "LimitsError",
    "Model",
    "ModelReply",
    "ModelRequest",
    "PrepareCommit",
    "RunContext",
    "RuntimeFailure",
    "RuntimeResult",
    "SlowTurnRuntime",
    "StateCandidate",
    "StateSnapshot",
    "StateStore",
    "ToolRequest",
    "Usage",
    "limits_from",
]
