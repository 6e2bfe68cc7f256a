"""Per-revision values that never change between requests: block ids, block token counts,
the plain constants in rank order and the common-case decision records.

A block's id is ``book:revision:entry`` and its budget cost is the token count of the wrapped
block, so for an entry whose content needs no template substitution both are fixed for the
revision. Tokenizing the same wrapped text on every turn was a large share of selection time;
here each is computed on first use and kept for as long as the compiled revision lives.
Entries with substituted content are costed per request by the caller.
"""

from __future__ import annotations

import threading
from typing import Any
from weakref import WeakKeyDictionary

from worldbook.engine.budget import plain_constants
from worldbook.engine.matcher import CompiledBook
from worldbook.engine.placement import wrap_block
from worldbook.engine.tokens import Tokenizer

NOT_TRIGGERED = "not_triggered"


class RevisionView:
    """Lazily filled caches for one (compiled revision, revision number).

    A view holds the book's columns, never the book: the registry below keys views by the
    book weakly, and a value that held its key would keep every compiled book alive."""

    __slots__ = (
        "book_id",
        "ids",
        "titles",
        "entries",
        "revision",
        "_ids",
        "_tokens",
        "_bases",
        "_plain",
    )

    def __init__(self, book: CompiledBook, revision: int) -> None:
        self.book_id, self.ids, self.titles = book.book_id, book.ids, book.titles
        self.entries = book.entries
        self.revision = revision
        self._ids: dict[int, str] = {}
        # Per tokenizer, each entry's block tokens (None: not counted yet).
        self._tokens: dict[str, list[int | None]] = {}
        self._bases: list[dict[str, Any]] | None = None
        self._plain: list[tuple[tuple[Any, ...], int]] | None = None

    def plain_constants(self) -> list[tuple[tuple[Any, ...], int]]:
        """(rank key, index) of the plain constants in rank order (see ``budget.allocate``)."""
        plain = self._plain
        if plain is None:
            plain = self._plain = plain_constants(self.book_id, self.ids, self.entries)
        return plain

    def decision_bases(self) -> list[dict[str, Any]]:
        """Per entry, the decision record of the common case (not triggered, no details).

        Never handed out: callers copy them (``dict.copy`` of a prepared record is several
        times faster than building one), then fill in ``details`` and what differs.
        """
        bases = self._bases
        if bases is None:
            book_id, revision = self.book_id, self.revision
            bases = self._bases = [
                {
                    "book_id": book_id,
                    "revision": revision,
                    "entry_id": entry_id,
                    "title": title,
                    "selected": False,
                    "reason": NOT_TRIGGERED,
                    "details": None,
                }
                for entry_id, title in zip(self.ids, self.titles, strict=True)
            ]
        return bases

    def block_id(self, i: int) -> str:
        found = self._ids.get(i)
        if found is None:
            found = self._ids[i] = f"{self.book_id}:{self.revision}:{self.ids[i]}"
        return found

    def preload(self, tokenizer_name: str, tokens: list[int | None]) -> None:
        """The entries' block tokens counted when the revision was prepared (None: not
        counted, :meth:`block_tokens` counts it when asked)."""
        self._tokens[tokenizer_name] = list(tokens)

    def counted_block_tokens(self, tokenizer_name: str) -> list[int | None]:
        """Each entry's block tokens as far as they are counted (None: not yet)."""
        return list(self._tokens.get(tokenizer_name) or [None] * len(self.entries))

    def all_block_tokens(self, tokenizer: Tokenizer) -> list[int]:
        return [self.block_tokens(i, tokenizer) for i in range(len(self.entries))]

    def block_tokens(self, i: int, tokenizer: Tokenizer) -> int:
        """Tokens of the entry's wrapped block with its own (unsubstituted) content."""
        counts = self._tokens.get(tokenizer.name)
        if counts is None:
            counts = self._tokens[tokenizer.name] = [None] * len(self.entries)
        found = counts[i]
        if found is None:
            entry = self.entries[i]
            wrapped = wrap_block(self.block_id(i), entry.title, entry.content)
            found = counts[i] = tokenizer.count(wrapped)
        return found


_views: WeakKeyDictionary[CompiledBook, dict[int, RevisionView]] = WeakKeyDictionary()
_lock = threading.Lock()


def revision_view(book: CompiledBook, revision: int) -> RevisionView:
    """The shared view of ``book`` at ``revision`` (one per pair while the book is cached)."""
    with _lock:
        per_book = _views.get(book)
        if per_book is None:
            per_book = _views[book] = {}
        view = per_book.get(revision)
        if view is None:
            view = per_book[revision] = RevisionView(book, revision)
        return view
