"""The editor's entry list: search, filters, sorting, token totals and paging over plain rows.

A 5,000-entry book is too large to render as one page (every entry a form: about twenty
seconds) but small enough to query in memory: a row keeps the entry, its token count and a
case-folded text to search, so a search is one substring test per entry and a page renders
fifty rows. Callers build the rows once per revision and draft (``worldbook/editor``) and keep
them; this module only answers questions about them, so it is pure and tested on plain data.

Search covers what SillyTavern users search: keys, secondary keys, the comment (our
``title``) and the content; every word of the query must occur (case-insensitive).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from worldbook.engine.keys import parse_regex_key
from worldbook.engine.schema import Kind, Position

Flag = Literal["", "yes", "no"]
Sort = Literal["book", "order", "title", "tokens", "updated"]
NO_GROUP = "-"
PAGE_SIZES = (25, 50, 100, 200)


@dataclass(frozen=True, slots=True)
class Row:
    """One entry as the list sees it.

    ``key`` names the entry in its draft (the base revision's id, or a key the draft gave a
    new entry); ``changed`` is the revision the entry last changed in, ``None`` when the draft
    changed it; ``draft`` is ``""``, ``"edited"`` or ``"added"``.
    """

    key: str
    entry: dict[str, Any]
    tokens: int
    changed: int | None
    draft: str
    haystack: str
    groups: tuple[str, ...]
    has_regex: bool

    @property
    def blocked(self) -> bool:
        """Needs a runtime we do not provide (EJS, MVU...): never selected as it is."""
        return bool(self.entry.get("runtime_requirements"))


def make_row(
    key: str, entry: dict[str, Any], tokens: int, changed: int | None, draft: str = ""
) -> Row:
    keys = list(entry.get("keys") or ())
    secondary = list(entry.get("secondary_keys") or ())
    text = "\n".join([*keys, *secondary, entry.get("title") or "", entry.get("content") or ""])
    group = entry.get("group") or ""
    return Row(
        key=key,
        entry=entry,
        tokens=tokens,
        changed=changed,
        draft=draft,
        haystack=text.casefold(),
        groups=tuple(sorted({g.strip() for g in group.split(",") if g.strip()})),
        has_regex=any(parse_regex_key(k) is not None for k in (*keys, *secondary)),
    )


class EntryQuery(BaseModel):
    """What the list shows: the editor's query string, validated (unknown values are 422)."""

    model_config = ConfigDict(extra="forbid")

    q: Annotated[str, StringConstraints(max_length=500)] = ""
    enabled: Flag = ""
    position: Position | Literal[""] = ""
    kind: Kind | Literal[""] = ""
    group: Annotated[str, StringConstraints(max_length=500)] = ""
    regex: Flag = ""
    blocked: Flag = ""
    sort: Sort = "book"
    dir: Literal["asc", "desc"] = "asc"
    page: Annotated[int, Field(ge=1, le=100_000)] = 1
    per: Literal[25, 50, 100, 200] = 50

    @property
    def filtered(self) -> bool:
        """Whether anything but sorting and paging narrows the list."""
        return any(
            getattr(self, name)
            for name in ("q", "enabled", "position", "kind", "group", "regex", "blocked")
        )

    def params(self, **changes: Any) -> dict[str, Any]:
        """The non-default parameters (for links), with ``changes`` applied."""
        data = {**self.model_dump(), **changes}
        defaults = type(self)().model_dump()
        return {k: v for k, v in data.items() if v != defaults[k]}


def _flag(wanted: Flag, value: bool) -> bool:
    return not wanted or (wanted == "yes") == value


def _keep(row: Row, query: EntryQuery, terms: Sequence[str]) -> bool:
    entry = row.entry
    if not _flag(query.enabled, bool(entry.get("enabled", True))):
        return False
    if query.position and entry.get("position") != query.position:
        return False
    if query.kind and entry.get("kind") != query.kind:
        return False
    if query.group:
        if query.group == NO_GROUP:
            if row.groups:
                return False
        elif query.group not in row.groups:
            return False
    if not _flag(query.regex, row.has_regex) or not _flag(query.blocked, row.blocked):
        return False
    return all(term in row.haystack for term in terms)


def _sort_key(sort: Sort):
    if sort == "order":
        return lambda pair: pair[1].entry.get("order", 0)
    if sort == "title":
        return lambda pair: (pair[1].entry.get("title") or "").casefold()
    if sort == "tokens":
        return lambda pair: pair[1].tokens
    if sort == "updated":
        return lambda pair: math.inf if pair[1].changed is None else pair[1].changed
    return None


def select_rows(rows: Sequence[Row], query: EntryQuery) -> list[Row]:
    """The rows the query matches, in its order (book order breaks every tie)."""
    terms = query.q.casefold().split()
    if query.filtered:
        kept = [(i, row) for i, row in enumerate(rows) if _keep(row, query, terms)]
    else:
        kept = list(enumerate(rows))
    key = _sort_key(query.sort)
    reverse = query.dir == "desc"
    if key is None:
        if reverse:
            kept.reverse()
    else:
        # Stable sorts: by book order first, then by the key, so ties keep book order.
        kept.sort(key=key, reverse=reverse)
    return [row for _, row in kept]


@dataclass(frozen=True)
class Page:
    rows: list[Row]
    number: int
    pages: int
    per: int
    matched: int
    matched_tokens: int
    total: int
    total_tokens: int

    @property
    def first(self) -> int:
        """1-based number of the first row on this page (0 on an empty page)."""
        return (self.number - 1) * self.per + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1 if self.rows else 0


def page_of(rows: Sequence[Row], query: EntryQuery) -> Page:
    """One page of the matching rows, with the book's and the filter's token totals."""
    matched = select_rows(rows, query)
    pages = max(1, math.ceil(len(matched) / query.per))
    number = min(query.page, pages)
    start = (number - 1) * query.per
    return Page(
        rows=matched[start : start + query.per],
        number=number,
        pages=pages,
        per=query.per,
        matched=len(matched),
        matched_tokens=_tokens(matched),
        total=len(rows),
        total_tokens=_tokens(rows),
    )


def _tokens(rows: Iterable[Row]) -> int:
    return sum(row.tokens for row in rows)


def groups_of(rows: Iterable[Row]) -> list[str]:
    """Every inclusion group name used in the book, for the group filter."""
    return sorted({name for row in rows for name in row.groups})
