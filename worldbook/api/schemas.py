"""Response envelopes of the worldbook API that exist only at HTTP level (book summaries,
revision bodies, import results), for the OpenAPI document.

Request bodies are not here: each is the class that validates it (``worldbook.contracts``,
``worldbook.engine.schema``), and the selection result is the engine's own
(``worldbook.engine.results``). Every model forbids unknown fields, so a test that validates
real responses against them catches a field the document does not have.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from worldbook.engine.schema import BookIn


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreatedBook(_Out):
    book_id: str
    revision: int
    deduplicated: bool
    import_report: dict[str, Any]


class CreateResponse(_Out):
    books: list[CreatedBook]
    replayed: bool


class BookSummary(_Out):
    book_id: str
    name: str
    description: str
    head_revision: int
    created_at: datetime
    updated_at: datetime


class BookListResponse(_Out):
    books: list[BookSummary]


class RevisionResponse(_Out):
    book_id: str
    revision: int
    content_hash: str
    entry_count: int
    import_report: dict[str, Any]
    created_at: datetime
    book: BookIn


class BookDetailResponse(BookSummary):
    head: RevisionResponse


class RevisionItem(_Out):
    revision: int
    content_hash: str
    entry_count: int
    created_at: datetime


class RevisionListResponse(_Out):
    book_id: str
    head_revision: int
    revisions: list[RevisionItem]


class PublishResponse(_Out):
    book_id: str
    revision: int
    content_hash: str


class PreviewResponse(_Out):
    book: dict[str, Any]
    import_report: dict[str, Any]
    sha256: str


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
