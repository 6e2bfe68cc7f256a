"""Reading a tenant's rows of one table as archive rows (``codec``), in bulk.

Console users' columns are written as null: users belong to the installation, and a row
restored elsewhere names none."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import codec
from .tables import Table

CHUNK = 5000


def read_rows(table: Table, tenant) -> Iterator[dict[str, Any]]:
    """The tenant's rows of ``table``, keyed by column (``attname``), archive-encoded."""
    names = [f.attname for f in table.columns]
    rows = (
        table.model._base_manager.filter(**{table.tenant_path: tenant})
        .order_by(table.pk.attname)
        .values_list(*names)
    )
    users = set(table.users)
    for values in rows.iterator(chunk_size=CHUNK):
        yield {
            name: None if name in users else codec.encode(f, value)
            for name, f, value in zip(names, table.columns, values, strict=True)
        }
