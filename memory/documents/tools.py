"""Running seed 000's memory tools for a turn: ``get_memory`` reads the conversation's
document, ``update_memory`` commits a whole new one at once through the same
compare-and-set service as every other door (``origin: tool``).

Before an update is stored, every hook in :data:`BEFORE_UPDATE` may refuse it (the seed's
``beforeUpdate``: business checks of the fields) by raising ``MemoryInvalid``. A call never
raises: its result is ``{revision, memory}``, ``{revision}``, or ``{error: {code, message,
details}}`` for the model to read and decide again (a conflict carries the current revision).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory.documents.selectors import read_document
from memory.documents.services import put_document
from memory.engine.tools import GET_MEMORY, check_arguments
from memory.errors import MemoryModelError

# (tenant, session id, slot, the proposed memory) -> None, or raise MemoryInvalid.
BeforeUpdate = Callable[[Any, str, str, dict], None]
BEFORE_UPDATE: list[BeforeUpdate] = []


def run_tool(tenant, session_id: str, slot: str, name: str, arguments: Any) -> dict[str, Any]:
    try:
        arguments = check_arguments(name, arguments)
        if name == GET_MEMORY:
            return read_document(tenant, session_id, slot)
        memory = arguments["memory"]
        if isinstance(memory, dict):
            for hook in BEFORE_UPDATE:
                hook(tenant, session_id, slot, memory)
        revision = put_document(
            tenant, session_id, slot, arguments["expectedRevision"], memory, origin="tool"
        )
        return {"revision": revision}
    except MemoryModelError as exc:
        return {"error": {"code": exc.code, "message": exc.message, "details": exc.details}}
