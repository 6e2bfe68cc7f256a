"""Checking a restore: every covered table's row count and content hash, the restored rows
hashed with their ids mapped back to the source's (``translate`` with the inverse map), so
equal data gives equal hashes whatever the new keys are."""

from __future__ import annotations

from dataclasses import dataclass

from . import codec
from .engine.remap import Remapper
from .errors import RestoreMismatch
from .rows import read_rows
from .tables import Table, tenant_tables
from .translate import IdMap, translate

EMPTY = codec.hash_lines([])


@dataclass(frozen=True)
class TableCheck:
    label: str
    source_rows: int
    restored_rows: int
    source_sha256: str
    restored_sha256: str

    @property
    def equal(self) -> bool:
        return (self.source_rows, self.source_sha256) == (self.restored_rows, self.restored_sha256)


def source_table(table: Table, tenant) -> tuple[int, str]:
    lines = [codec.canonical(row) for row in read_rows(table, tenant)]
    return len(lines), codec.hash_lines(lines)


def restored_table(table: Table, tenant, ids: IdMap) -> tuple[int, str]:
    """Count and hash of ``tenant``'s rows of ``table``, mapped back through ``ids``."""
    inverse = ids.inverse()
    remapper = Remapper(inverse.uuids, inverse.ints)
    lines = [
        codec.canonical(translate(table, row, inverse, remapper))
        for row in read_rows(table, tenant)
    ]
    return len(lines), codec.hash_lines(lines)


def compare_tenants(source, restored, ids: IdMap) -> list[TableCheck]:
    """Every covered table of the two tenants, side by side."""
    checks = []
    for table in tenant_tables():
        rows, digest = source_table(table, source)
        got_rows, got = restored_table(table, restored, ids)
        checks.append(TableCheck(table.label, rows, got_rows, digest, got))
    return checks


def against_manifest(manifest: dict, tenant, ids: IdMap) -> list[TableCheck]:
    """The restored tenant against the counts and hashes its archive's manifest states;
    raises ``RestoreMismatch`` naming the tables that differ."""
    checks = []
    for table in tenant_tables():
        stated = manifest["tables"].get(table.label, {"rows": 0, "sha256": EMPTY})
        got_rows, got = restored_table(table, tenant, ids)
        checks.append(
            TableCheck(table.label, stated["rows"], got_rows, stated.get("sha256", ""), got)
        )
    if bad := [c.label for c in checks if not c.equal]:
        raise RestoreMismatch(
            message="the restored rows differ from the archive", details={"tables": bad[:10]}
        )
    return checks
