"""The selection result as callers receive it: the one type the engine fills and the API
documents (``POST /v1/context/select``; the playground and the chat turn read the same).

Field names follow the seed's response table. ``SelectionResult.response()`` takes its keys
from :class:`SelectResponse`, so the engine cannot return a field the document lacks, and a
test validates real engine output against these models (every one forbids unknown fields).
The engine does not build the models on its hot path: a 5,000-entry book has 5,000 decision
records, which stay plain dicts of exactly this shape.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from worldbook.engine.schema import Position, Role


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Block(_Out):
    """One selected entry, placed: what a host puts into the model's input."""

    id: str
    book_id: str
    revision: int
    entry_id: str
    title: str
    content: str
    position: Position
    depth: int
    role: Role
    order: int
    reason: str
    outlet_name: str | None = None  # present only for ``position: outlet``


class Decision(_Out):
    """Why an entry was or was not read this turn; every entry of every book gets one."""

    book_id: str
    revision: int
    entry_id: str
    title: str
    selected: bool
    reason: str
    details: dict[str, Any]


class SnapshotBook(_Out):
    book_id: str
    revision: int
    content_hash: str


class Snapshot(_Out):
    """The exact revisions this selection read, to reproduce it."""

    books: list[SnapshotBook]


class DegradedNote(_Out):
    """Something hybrid recall could not do (and what it did instead)."""

    code: str
    message: str
    book_id: str | None = None
    revision: int | None = None


class SelectResponse(_Out):
    """The selection result of the seed."""

    blocks: list[Block]
    context: str
    decisions: list[Decision]
    snapshot: Snapshot
    token_count: int
    token_budget: int
    tokenizer: str
    token_scope: Literal["context"]
    degraded: list[DegradedNote]
    policy_version: str
    prompt_hash: str
    selection_fingerprint: str
    duration_ms: float


RESPONSE_FIELDS: tuple[str, ...] = tuple(SelectResponse.model_fields)
