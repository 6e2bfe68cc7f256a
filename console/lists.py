"""The console lists' shared reads: a search over named fields, word by word, and a row count."""

from __future__ import annotations

from django.db.models import (
    Count,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from console.scoping import scoped


def matching(rows, query: str | None, fields: tuple[str, ...]):
    """``rows`` where every word of ``query`` is in one of ``fields`` (case-insensitive);
    all of them for an empty query. Lists of hundreds (characters, players, model configs)
    are searched in the database, before paging. A NUL (``?q=%00``) is dropped: no stored
    text holds one, and PostgreSQL refuses it in a comparison (a server error)."""
    for word in (query or "").replace("\x00", " ").split()[:MAX_SEARCH_WORDS]:
        condition = Q()
        for name in fields:
            condition |= Q(**{f"{name}__icontains": word})
        rows = rows.filter(condition)
    return rows


MAX_SEARCH_WORDS = 8


def row_count(model, tenant, field: str):
    """How many of the tenant's ``model`` rows point at the outer row through ``field``, as
    an annotation (0 when none): a correlated count, not a join that multiplies rows."""
    counts = (
        scoped(model, tenant)
        .filter(**{field: OuterRef("pk")})
        .order_by()
        .values(field)
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counts, output_field=IntegerField()), Value(0))
