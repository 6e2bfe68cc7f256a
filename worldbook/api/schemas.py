"""Request/response models of the worldbook API, for validation and the OpenAPI schema."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from worldbook.engine.schema import BookIn, BookRef, SelectRequest

BookBody = BookIn
SelectBody = SelectRequest


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PublishBody(BookIn):
    """A full new revision of the book plus the revision it replaces."""

    expected_revision: int


class NativeImportBody(_Strict):
    books: Annotated[list[BookIn], Field(min_length=1, max_length=10)]


class SearchRequest(_Strict):
    query: Annotated[str, StringConstraints(min_length=1, max_length=8000)]
    books: Annotated[list[BookRef], Field(min_length=1, max_length=20)]
    mode: Literal["lexical", "vector", "hybrid"] = "lexical"
    limit: Annotated[int, Field(ge=1, le=50)] = 10


SearchBody = SearchRequest


class IndexBody(_Strict):
    revision: int | None = None
    force: bool = False


class BindingItem(_Strict):
    book_id: str
    revision: int | None = None
    position: int = 0
    enabled: bool = True


class BindingsBody(_Strict):
    bindings: Annotated[list[BindingItem], Field(max_length=20)]


class BindingsResponse(BaseModel):
    tenant_id: str
    prompt_id: str
    bindings: list[BindingItem]


class ResolvedBook(BaseModel):
    book_id: str
    revision: int


class ResolveResponse(BaseModel):
    tenant_id: str
    prompt_id: str
    books: list[ResolvedBook]


class CreatedBook(BaseModel):
    book_id: str
    revision: int
    deduplicated: bool
    import_report: dict[str, Any]


class CreateResponse(BaseModel):
    books: list[CreatedBook]
    replayed: bool


class BookSummary(BaseModel):
    book_id: str
    name: str
    description: str
    head_revision: int
    created_at: datetime
    updated_at: datetime


class BookListResponse(BaseModel):
    books: list[BookSummary]


class RevisionResponse(BaseModel):
    book_id: str
    revision: int
    content_hash: str
    entry_count: int
    import_report: dict[str, Any]
    created_at: datetime
    book: BookIn


class BookDetailResponse(BookSummary):
    head: RevisionResponse


class RevisionItem(BaseModel):
    revision: int
    content_hash: str
    entry_count: int
    created_at: datetime


class RevisionListResponse(BaseModel):
    book_id: str
    head_revision: int
    revisions: list[RevisionItem]


class PublishResponse(BaseModel):
    book_id: str
    revision: int
    content_hash: str


class PreviewResponse(BaseModel):
    book: dict[str, Any]
    import_report: dict[str, Any]
    sha256: str


class IndexResponse(BaseModel):
    book_id: str
    revision: int
    status: Literal["pending", "building", "ready", "failed", "missing"]
    embedding_version: str
    chunks_total: int
    chunks_done: int
    error: str | None = None


class Block(BaseModel):
    id: str
    book_id: str
    revision: int
    entry_id: str
    title: str
    content: str
    position: str
    depth: int
    role: str
    order: int
    reason: str


class SelectResponse(BaseModel):
    blocks: list[Block]
    context: str
    decisions: list[dict[str, Any]]
    snapshot: dict[str, Any]
    token_count: int
    token_budget: int
    tokenizer: str
    token_scope: str
    degraded: list[dict[str, Any]]
    policy_version: str
    prompt_hash: str
    selection_fingerprint: str
    duration_ms: float


class SearchHit(BaseModel):
    book_id: str
    revision: int
    entry_id: str
    title: str
    score: float
    excerpt: str


class SearchResponse(BaseModel):
    query: str
    mode: str
    results: list[SearchHit]
    degraded: list[dict[str, Any]]


PreviewUpload = {
    "multipart/form-data": {
        "type": "object",
        "properties": {"file": {"type": "string", "format": "binary"}},
        "required": ["file"],
    }
}
FilesUpload = {
    "multipart/form-data": {
        "type": "object",
        "properties": {"files": {"type": "array", "items": {"type": "string", "format": "binary"}}},
        "required": ["files"],
    }
}
