"""Moving an archive row between tenants: the one function the restore uses to rewrite a
source row's ids to the restored rows' and the check uses to map a restored row back.

Primary and foreign keys go through the map of their table; text and JSON columns through
``engine.remap`` (UUIDs anywhere, integer ids at declared JSON paths). A foreign key that
names no row of the archive is refused (``archive_dangling_reference``)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from .engine.errors import ArchiveRefused
from .engine.remap import Remapper
from .tables import INT_JSON_REFS, Table

TENANT = "console.Tenant"


@dataclass
class IdMap:
    """Source id -> restored id: ``uuids`` for every UUID key (and the tenant's), ``ints``
    per table for integer keys."""

    uuids: dict[str, str] = field(default_factory=dict)
    ints: dict[str, dict[int, int]] = field(default_factory=dict)
    int_tables: set[str] = field(default_factory=set)

    def inverse(self) -> IdMap:
        return IdMap(
            uuids={new: old for old, new in self.uuids.items()},
            ints={label: {n: o for o, n in m.items()} for label, m in self.ints.items()},
            int_tables=set(self.int_tables),
        )

    def key(self, label: str, value: Any, *, column: str) -> Any:
        """The restored id of ``value``, a key of table ``label``; refused if it names none."""
        if value is None:
            return None
        if label in self.int_tables:
            found = self.ints.get(label, {}).get(value) if _is_int(value) else None
        else:
            found = self.uuids.get(_uuid_text(value))
        if found is None:
            raise ArchiveRefused(
                "archive_dangling_reference",
                "a row names a row the archive does not hold",
                {"table": label, "column": column, "id": str(value)[:64]},
            )
        return found


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _uuid_text(value: Any) -> str:
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        return ""


def translate(table: Table, row: dict[str, Any], ids: IdMap, remapper: Remapper) -> dict[str, Any]:
    """``row`` with its keys and the ids inside its text and JSON rewritten through ``ids``."""
    out = dict(row)
    pk = table.pk.attname
    if not table.pk.is_relation:
        out[pk] = ids.key(table.label, row[pk], column=pk)
    for column in table.users:
        out[column] = None
    tenant_column = table.tenant_column
    if tenant_column:
        out[tenant_column] = ids.key(TENANT, row[tenant_column], column=tenant_column)
    for column, target in table.fks.items():
        out[column] = ids.key(target, row[column], column=column)
    paths = INT_JSON_REFS.get(table.label, {})
    for column in table.remapped:
        value = row[column]
        if column in paths:
            value = remapper.int_paths(value, paths[column])
        out[column] = remapper.json(value) if not isinstance(value, str) else remapper.text(value)
    return out
