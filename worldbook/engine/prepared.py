"""A revision prepared for selection, and its serialised form.

Preparing a revision builds its compact records, keyword automata and BM25 index: well
under a tenth of a second for 5,000 entries, so a turn that finds no prepared form can make
it. The blocks' token counts are not part of it: a selection counts the few it needs
(``revision.RevisionView``), and :func:`dumps` counts them all for the shared file, which
the worker writes (``worldbook.compiled``) and any process loads in a fraction of the time.

The blob is a pickle read back through :class:`_Unpickler`, which refuses every global but
the few classes and functions a prepared revision is made of, so a tampered file cannot run
code; ``FORMAT`` names the layout and the library versions it depends on, and a blob of
another format is rejected (the store then prepares the revision again).
"""

from __future__ import annotations

import io
import pickle
from array import _array_reconstructor, array  # type: ignore[attr-defined]
from collections.abc import Sequence
from typing import Any

import numpy as np

from console.search.lexical import Doc, LexicalIndex
from worldbook.engine.entry import Entry, compact
from worldbook.engine.gc_pause import paused_gc
from worldbook.engine.matcher import CompiledBook, _WordTable
from worldbook.engine.revision import revision_view
from worldbook.engine.schema import Condition, EntryIn
from worldbook.engine.selection import LoadedBook
from worldbook.engine.tokens import Tokenizer

FORMAT = f"wb-prepared/3 numpy={np.__version__.split('.')[0]}"


class FormatMismatch(ValueError):
    """A blob written by another layout or library version (prepare the revision again)."""


def lexical_docs(entries: Sequence[EntryIn | Entry]) -> list[Doc]:
    """What recall indexes of each entry: its id, title and content."""
    return [Doc(e.id or "", e.title, e.content) for e in entries]


def prepare(
    book_id: str,
    revision: int,
    content_hash: str,
    entries: Sequence[EntryIn | Entry],
) -> LoadedBook:
    """Everything selection and recall read of the revision but the token counts, built now."""
    with paused_gc():
        records = compact(entries)
        compiled = CompiledBook(book_id, content_hash, records)
        lexical = LexicalIndex.build(lexical_docs(records))
    return LoadedBook(book_id, revision, content_hash, compiled.entries, compiled, lexical)


def dumps(book: LoadedBook, tokenizer: Tokenizer, *, counted: bool = True) -> bytes:
    """The blob of a prepared revision: with ``counted``, every block's tokens (those a
    selection has not counted yet are counted now); without, only those already counted
    (a reader counts the rest when a selection needs them)."""
    assert book.compiled is not None and book.lexical is not None, "prepare() the book first"
    view = revision_view(book.compiled, book.revision)
    if counted:
        tokens: list[int | None] = list(view.all_block_tokens(tokenizer))
    else:
        tokens = view.counted_block_tokens(tokenizer.name)
    state = (
        FORMAT,
        book.book_id,
        book.revision,
        book.content_hash,
        book.compiled,
        book.lexical,
        tokenizer.name,
        tokens,
    )
    with paused_gc():
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)


def loads(blob: bytes) -> LoadedBook:
    """The prepared revision of :func:`dumps`; :class:`FormatMismatch` or
    :class:`pickle.UnpicklingError` when the blob is not one."""
    with paused_gc():
        state = _Unpickler(io.BytesIO(blob)).load()
    if not isinstance(state, tuple) or not state or state[0] != FORMAT:
        raise FormatMismatch("the blob was written by another format")
    _, book_id, revision, content_hash, compiled, lexical, tokenizer_name, tokens = state
    revision_view(compiled, revision).preload(tokenizer_name, tokens)
    return LoadedBook(book_id, revision, content_hash, compiled.entries, compiled, lexical)


# Everything a prepared revision pickles by reference.
_ALLOWED: dict[tuple[str, str], Any] = {
    ("worldbook.engine.entry", "Entry"): Entry,
    ("worldbook.engine.matcher", "CompiledBook"): CompiledBook,
    ("worldbook.engine.matcher", "_WordTable"): _WordTable,
    ("array", "array"): array,
    ("array", "_array_reconstructor"): _array_reconstructor,
    ("console.search.lexical", "LexicalIndex"): LexicalIndex,
    # where the index lived before it moved to the kernel: blobs stored then still load
    ("worldbook.engine.lexical", "LexicalIndex"): LexicalIndex,
    ("worldbook.engine.schema", "Condition"): Condition,
    ("numpy", "dtype"): np.dtype,
    ("numpy", "ndarray"): np.ndarray,
}


def _numpy_global(module: str, name: str) -> Any:
    """NumPy's own array reconstructors, wherever this NumPy version keeps them."""
    if name in ("_reconstruct", "_frombuffer") and module.startswith("numpy"):
        return getattr(__import__(module, fromlist=[name]), name)
    return None


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        found = _ALLOWED.get((module, name)) or _numpy_global(module, name)
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a prepared revision")
        return found
