"""Writing a tenant's archive: ``manifest.json``, one ``tables/<label>.jsonl`` per covered
table (one JSON row a line) and ``files/<sha256>`` for each stored image file, by content.

Rows are read in bulk, table by table, inside one repeatable-read transaction, so the archive
is one consistent picture of the tenant even while it keeps chatting."""

from __future__ import annotations

import hashlib
import logging
import zipfile
from dataclasses import dataclass
from typing import IO, Any

from django.db import connection, transaction
from django.utils import timezone

from images import files as image_files

from . import codec
from .engine import manifest as manifest_format
from .engine.reader import FILES, MANIFEST, TABLES
from .rows import read_rows
from .tables import FILE_COLUMNS, tenant_tables

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Exported:
    manifest: dict[str, Any]
    rows: int
    files: int


def export_tenant(tenant, out: IO[bytes]) -> Exported:
    """Write ``tenant``'s archive to ``out`` (a binary file open for writing)."""
    outermost = not connection.in_atomic_block
    with transaction.atomic(), zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        tables, names = _write_tables(zf, tenant)
        files = _write_files(zf, tenant, names)
        manifest = manifest_format.build(
            tenant_id=str(tenant.pk),
            tenant_name=tenant.name,
            created_at=timezone.now().isoformat(),
            tables=tables,
            files=files,
        )
        zf.writestr(MANIFEST, codec.canonical(manifest))
    total = sum(info["rows"] for info in tables.values())
    log.info(
        "backup.exported", extra={"tenant": str(tenant.pk), "rows": total, "files": len(files)}
    )
    return Exported(manifest=manifest, rows=total, files=len(files))


def _write_tables(zf: zipfile.ZipFile, tenant) -> tuple[dict, set[str]]:
    tables: dict[str, dict] = {}
    names: set[str] = set()
    for table in tenant_tables():
        file_columns = FILE_COLUMNS.get(table.label, ())
        lines: list[str] = []
        with zf.open(f"{TABLES}{table.label}.jsonl", "w", force_zip64=True) as handle:
            for row in read_rows(table, tenant):
                line = codec.canonical(row)
                lines.append(line)
                handle.write(line.encode("utf-8") + b"\n")
                for column in file_columns:
                    names.update(_file_names(row.get(column)))
        tables[table.label] = {"rows": len(lines), "sha256": codec.hash_lines(lines)}
    return tables, names


def _file_names(value) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v]
    return []


def _write_files(zf: zipfile.ZipFile, tenant, names: set[str]) -> dict[str, str]:
    """Each named file's bytes once, by SHA-256; a name whose file is gone is left out (and
    logged), as the row still names it."""
    files: dict[str, str] = {}
    written: set[str] = set()
    storage = image_files.storage()
    for name in sorted(names):
        try:
            with storage.open(name, "rb") as handle:
                data = handle.read()
        except (OSError, ValueError):
            log.warning("backup.file_missing", extra={"tenant": str(tenant.pk), "file": name})
            continue
        digest = hashlib.sha256(data).hexdigest()
        files[name] = digest
        if digest not in written:
            zf.writestr(f"{FILES}{digest}", data)
            written.add(digest)
    return files
