"""Per-entry facts the editor shows for a revision: tokens of the content and the revision the
entry last changed in.

They are computed once per revision and stored beside it (``BookRevision.entry_stats``), from
the previous revision's facts: an entry equal to its predecessor keeps its count and its
"last changed", a changed entry is counted again. Counting every entry of a 5,000-entry book
takes a fifth of a second, too slow for every page view and wasteful at every publish.
The token counter is injected, so this stays pure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypedDict


class EntryStats(TypedDict):
    tokens: dict[str, int]
    changed: dict[str, int]


def revision_stats(
    entries: Sequence[dict[str, Any]],
    revision: int,
    count: Callable[[str], int],
    previous: Sequence[dict[str, Any]] | None = None,
    previous_stats: EntryStats | None = None,
) -> EntryStats:
    """Stats of ``entries`` (revision ``revision``) given its predecessor, when there is one.

    Without the predecessor's stats an unchanged entry is dated to the predecessor: all we
    know is that it did not change in this revision.
    """
    before = {entry.get("id"): entry for entry in previous or ()}
    old_tokens = previous_stats["tokens"] if previous_stats else {}
    old_changed = previous_stats["changed"] if previous_stats else {}
    tokens: dict[str, int] = {}
    changed: dict[str, int] = {}
    for entry in entries:
        entry_id = str(entry.get("id"))
        old = before.get(entry_id)
        content = entry.get("content") or ""
        if old is not None and entry_id in old_tokens and old.get("content") == content:
            tokens[entry_id] = old_tokens[entry_id]
        else:
            tokens[entry_id] = count(content)
        if old is not None and old == entry:
            changed[entry_id] = old_changed.get(entry_id, revision - 1)
        else:
            changed[entry_id] = revision
    return {"tokens": tokens, "changed": changed}
