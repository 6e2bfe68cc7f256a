"""Builders shared by the selection-engine tests (plain module; no conftest needed)."""

from __future__ import annotations

from typing import Any

from worldbook.engine import selection
from worldbook.engine.schema import BookIn, SelectRequest, content_hash
from worldbook.engine.selection import LoadedBook, SelectionResult
from worldbook.tokenizer import CL100K


def select(request: SelectRequest, books: list[LoadedBook], **options: Any) -> SelectionResult:
    """The engine's ``select`` counting with cl100k, as the product does."""
    return selection.select(request, books, tokenizer=CL100K, **options)


def book(*entries: dict[str, Any], name: str = "test book") -> BookIn:
    return BookIn.model_validate({"name": name, "entries": list(entries)})


def loaded(book_in: BookIn, book_id: str = "b1", revision: int = 1) -> LoadedBook:
    return LoadedBook(book_id, revision, content_hash(book_in), book_in.entries)


def request(query: str = "hello", books: tuple[str, ...] = ("b1",), **fields: Any) -> SelectRequest:
    data: dict[str, Any] = {"books": [{"book_id": b} for b in books], "query": query}
    data.update(fields)
    return SelectRequest.model_validate(data)


def run(entries: list[dict[str, Any]], query: str = "hello", **fields: Any) -> SelectionResult:
    """Select from one book ``b1`` holding ``entries``."""
    return select(request(query, **fields), [loaded(book(*entries))])


def decision(result: SelectionResult, entry_id: str, book_id: str = "b1") -> dict[str, Any]:
    for item in result.decisions:
        if item["entry_id"] == entry_id and item["book_id"] == book_id:
            return item
    raise AssertionError(f"no decision for {book_id}:{entry_id}")


def reason(result: SelectionResult, entry_id: str, book_id: str = "b1") -> str:
    return str(decision(result, entry_id, book_id)["reason"])


def selected_ids(result: SelectionResult) -> list[str]:
    return [block["entry_id"] for block in result.blocks]
