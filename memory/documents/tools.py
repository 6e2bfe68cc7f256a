"""Running seed 000's memory tools for a turn: ``get_memory`` reads the conversation's
document, ``update_memory`` commits a whole new one at once through the same
compare-and-set service as every other door (``origin: tool``).

Before an update is stored, every hook in :data:`BEFORE_UPDATE` may refuse it (the seed's
``beforeUpdate``: business checks of the fields) by raising ``MemoryInvalid``. A call never
raises: its result is ``{revision, memory}``, ``{revision}``, or ``{error: {code, message,
details}}`` for the model to read and decide again (a conflict carries the current revision).
In the acceptance-gated mode (``memory.documents.proposals``) an update is held instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory.documents.proposals import Gate, propose, turn_view
from memory.documents.selectors import read_document
from memory.documents.services import put_document
from memory.engine.tools import GET_MEMORY, check_arguments
from memory.errors import MemoryModelError

# (tenant, session id, slot, the proposed memory) -> None, or raise MemoryInvalid.
BeforeUpdate = Callable[[Any, str, str, dict], None]
BEFORE_UPDATE: list[BeforeUpdate] = []


def run_tool(
    tenant, session_id: str, slot: str, name: str, arguments: Any, gate: Gate | None = None
) -> dict[str, Any]:
    """Answer one call. With a ``gate`` (acceptance-gated mode) an update is held as the
    turn's proposal (``{revision, pending: true}``) and a read sees that proposal."""
    try:
        arguments = check_arguments(name, arguments)
        if name == GET_MEMORY:
            held = turn_view(tenant, slot, gate) if gate is not None else None
            return held if held is not None else read_document(tenant, session_id, slot)
        memory = arguments["memory"]
        if isinstance(memory, dict):
            for hook in BEFORE_UPDATE:
                hook(tenant, session_id, slot, memory)
        expected = arguments["expectedRevision"]
        if gate is not None:
            return {
                "revision": propose(tenant, session_id, slot, gate, expected, memory),
                "pending": True,
            }
        revision = put_document(tenant, session_id, slot, expected, memory, origin="tool")
        return {"revision": revision}
    except MemoryModelError as exc:
        return {"error": {"code": exc.code, "message": exc.message, "details": exc.details}}
