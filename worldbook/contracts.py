"""Request and response bodies of worldbook operations, beyond the engine's own book
(``engine/schema.py``) and selection (``engine/results.py``) types.

Each request class is what the API documents *and* what validates the body (the API's
``validates`` decorator does both; services validate console and command input with the same
classes), so a documented default or limit is always the enforced one. Every class forbids
unknown fields; field names are the seed's. Numbers and flags are strict where a client's
``"1"`` or ``true`` for a revision would otherwise be silently coerced.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    field_validator,
)

from worldbook.engine.results import DegradedNote
from worldbook.engine.schema import BookIn, BookRef, each_book_once

MAX_BATCH_BOOKS = 10
MAX_BINDINGS = 20
MAX_PROMPT_ID = 200
POSITION_LIMIT = 1_000_000

RevisionNumber = Annotated[StrictInt, Field(ge=1)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- books --------------------------------------------------------------------------------


class RevisionPublish(BookIn):
    """``POST /books/{id}/revisions``: the whole new revision plus the revision it replaces
    (the seed's shape: the book's own fields and ``expected_revision`` side by side)."""

    expected_revision: RevisionNumber

    def book(self) -> BookIn:
        """The book without ``expected_revision`` (fields already validated)."""
        return BookIn.model_construct(**{name: getattr(self, name) for name in BookIn.model_fields})


class NativeImport(_Body):
    """``POST /imports``: 1–10 native books, created all or none."""

    books: Annotated[list[BookIn], Field(min_length=1, max_length=MAX_BATCH_BOOKS)]


# --- search -------------------------------------------------------------------------------


class EntrySearch(_Body):
    """``POST /search``: ranked entries of the listed exact revisions (not model context)."""

    query: Annotated[str, StringConstraints(min_length=1, max_length=8000)]
    books: Annotated[list[BookRef], Field(min_length=1, max_length=20)]
    mode: Literal["lexical", "vector", "hybrid"] = "lexical"
    limit: Annotated[int, Field(ge=1, le=50)] = 10


class SearchHit(_Body):
    book_id: str
    revision: int
    entry_id: str
    title: str
    score: float
    excerpt: Annotated[str, StringConstraints(max_length=600)]


class SearchResponse(_Body):
    query: str
    mode: Literal["lexical", "vector", "hybrid"]
    results: list[SearchHit]
    degraded: list[DegradedNote]


# --- vector index -------------------------------------------------------------------------


class IndexBuild(_Body):
    """``POST /books/{id}/index``: build the index of one exact revision."""

    revision: RevisionNumber | None = Field(default=None, description="null: the head revision")
    force: StrictBool = Field(default=False, description="rebuild even if a ready index exists")


class IndexState(_Body):
    """Where the index of one revision stands; ``missing`` when none was ever requested."""

    book_id: str
    revision: int
    status: Literal["missing", "pending", "building", "ready", "failed"]
    embedding_version: str
    chunks_total: int
    chunks_done: int
    chunk_count: int
    error: str | None
    attempts: int
    started_at: datetime | None
    finished_at: datetime | None


class IndexBuildResponse(IndexState):
    reused: bool = Field(description="true: a ready index of this revision was kept")


# --- prompt bindings ----------------------------------------------------------------------


class BindingItem(_Body):
    """One bound book. ``revision: null`` follows the head; a number pins that revision."""

    book_id: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    revision: RevisionNumber | None = None
    position: Annotated[StrictInt, Field(ge=-POSITION_LIMIT, le=POSITION_LIMIT)] | None = Field(
        default=None, description="resolve order; null: the item's index in the list"
    )
    enabled: StrictBool = True


class PromptBindings(_Body):
    """``PUT /prompt-bindings``: every binding of the prompt at once (``[]`` clears them)."""

    bindings: Annotated[list[BindingItem], Field(max_length=MAX_BINDINGS)]

    @field_validator("bindings")
    @classmethod
    def _each_book_once(cls, items: list[BindingItem]) -> list[BindingItem]:
        return each_book_once(items, "bound")


class Binding(_Body):
    book_id: str
    revision: int | None
    position: int
    enabled: bool


class BindingsResponse(_Body):
    tenant_id: str
    prompt_id: str
    bindings: list[Binding]


class ScopeBindingsResponse(_Body):
    """``GET``/``PUT /scope-bindings``: a lorebook scope's bindings (``target_id`` "" for
    the tenant's global books)."""

    tenant_id: str
    scope: Literal["global", "scenario", "chat", "persona"]
    target_id: str
    bindings: list[Binding]


class ScopeSettingsBody(_Body):
    """``PUT /scope-settings``: the order between lorebook scopes, SillyTavern's
    ``world_info_character_strategy`` by name (or its number: 0, 1, 2)."""

    character_strategy: (
        Literal["evenly", "character_first", "global_first"]
        | Annotated[StrictInt, Field(ge=0, le=2)]
    )


class ScopeSettingsResponse(_Body):
    tenant_id: str
    character_strategy: Literal["evenly", "character_first", "global_first"]


class ResolvedBook(_Body):
    book_id: str
    revision: int


class ResolveResponse(_Body):
    tenant_id: str
    prompt_id: str
    books: list[ResolvedBook]


def binding_body(binding) -> dict[str, Any]:
    """A stored ``PromptBinding`` as a :class:`Binding` body."""
    return {
        "book_id": str(binding.book_id),
        "revision": binding.revision,
        "position": binding.position,
        "enabled": binding.enabled,
    }
