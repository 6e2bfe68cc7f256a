"""Per-entry token counts and "last changed" of a stored revision (``entry_stats``).

A draft publish stores them as it writes the revision; a revision made by another door (the
API, an import) gets them the first time the editor reads it, from its predecessor's, which
is a cache fill of a pure function (``worldbook.engine.stats``), written once with a
conditional UPDATE so two readers racing to fill it store the same value.
"""

from __future__ import annotations

from functools import lru_cache

from console.tokens import count_tokens
from worldbook.engine.stats import EntryStats, revision_stats
from worldbook.models import BookRevision

# The editor counts an entry's content each time a draft changes it; small texts are
# remembered (the cache keeps its keys alive, and contents can be 200,000 characters).
_SMALL = 20_000


@lru_cache(maxsize=20_000)
def _small_count(text: str) -> int:
    return count_tokens(text)


def content_tokens(text: str) -> int:
    """cl100k tokens of an entry's content."""
    return _small_count(text) if len(text) <= _SMALL else count_tokens(text)


def stats_of(row: BookRevision) -> EntryStats:
    """``row.entry_stats``, computed and stored first if the revision has none yet."""
    if row.entry_stats:
        return row.entry_stats
    previous = (
        BookRevision.objects.filter(book_id=row.book_id, revision=row.revision - 1)
        .values("content", "entry_stats")
        .first()
    )
    stats = revision_stats(
        row.content.get("entries") or [],
        row.revision,
        content_tokens,
        previous=(previous["content"].get("entries") or []) if previous else None,
        previous_stats=previous["entry_stats"] if previous else None,
    )
    BookRevision.objects.filter(pk=row.pk, entry_stats__isnull=True).update(entry_stats=stats)
    row.entry_stats = stats
    return stats
