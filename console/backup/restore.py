"""Restoring an archive into an empty tenant, with every id remapped, in one transaction.

The archive is read and checked in full (``engine.reader``) before anything is written. Then,
under a lock on the target tenant: the tenant must own nothing (``tenant_not_empty``); every
row gets a new key (UUIDs drawn fresh, integers from the table's own sequence); rows are
rewritten (``translate``) and inserted in bulk, parents first; the image files are stored
under the new tenant; and the restored rows are hashed with their ids mapped back and
compared with the manifest (``verify``). Any failure rolls everything back, files included.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import IO

import psycopg
from django.core.files.base import ContentFile
from django.db import DatabaseError, connection, transaction

from console.models import Tenant
from images import files as image_files

from . import codec, verify
from .engine import reader
from .engine.errors import ArchiveRefused
from .engine.remap import Remapper
from .errors import TenantNotEmpty
from .tables import FILE_COLUMNS, Table, by_label, tenant_tables
from .translate import TENANT, IdMap, translate

log = logging.getLogger(__name__)
UNMAPPED_SAMPLE = 50


@dataclass
class Restored:
    tenant: Tenant
    rows: int
    files: int
    ids: IdMap
    unmapped: list[str] = field(default_factory=list)  # a sample of ids that named nothing
    unmapped_count: int = 0


def restore_archive(source: bytes | IO[bytes], tenant: Tenant, *, check: bool = True) -> Restored:
    """Restore ``source`` into ``tenant`` (which must be empty); ``check`` hashes the result
    against the manifest before committing."""
    archive = reader.read(source)
    tables = by_label()
    if unknown := sorted(set(archive.tables) - set(tables)):
        raise ArchiveRefused(
            message="the archive holds tables this installation lacks",
            details={"tables": unknown[:10]},
        )
    stored: list[str] = []
    try:
        with transaction.atomic():
            Tenant.objects.select_for_update().get(pk=tenant.pk)
            ensure_empty(tenant)
            ids = _assign_ids(archive, tenant)
            remapper = Remapper(ids.uuids, ids.ints)
            translated = {
                label: [
                    translate(tables[label], row, ids, remapper)
                    for row in _checked(tables[label], rows)
                ]
                for label, rows in archive.tables.items()
            }
            _check_file_names(translated, tenant)
            files = _store_files(archive, remapper, stored, tenant)
            total = _insert_all(translated)
            if check:
                verify.against_manifest(archive.manifest, tenant, ids)
    except Exception:
        image_files.delete(stored)
        raise
    unmapped = sorted(remapper.unmapped)
    log.info(
        "backup.restored",
        extra={"tenant": str(tenant.pk), "rows": total, "unmapped": len(unmapped)},
    )
    return Restored(tenant, total, files, ids, unmapped[:UNMAPPED_SAMPLE], len(unmapped))


def ensure_empty(tenant: Tenant) -> None:
    """Raise ``TenantNotEmpty`` when any covered table holds a row of ``tenant``."""
    busy = [
        t.label
        for t in tenant_tables()
        if t.model._base_manager.filter(**{t.tenant_path: tenant}).exists()
    ]
    if busy:
        raise TenantNotEmpty(
            message="a restore needs an empty tenant", details={"tables": busy[:10]}
        )


def _assign_ids(archive: reader.Archive, tenant: Tenant) -> IdMap:
    tables = by_label()
    source_tenant = _uuid(archive.manifest["source_tenant"]["id"], TENANT)
    ids = IdMap(uuids={source_tenant: str(tenant.pk)})
    for label, rows in archive.tables.items():
        table = tables[label]
        if table.pk.is_relation:
            continue
        olds = [row.get(table.pk.attname) for row in rows]
        if table.int_pk:
            ids.int_tables.add(label)
            if not all(isinstance(o, int) and not isinstance(o, bool) for o in olds) or len(
                set(olds)
            ) != len(olds):
                raise ArchiveRefused(
                    message="a table's keys are not distinct integers", details={"table": label}
                )
            ids.ints[label] = dict(zip(olds, _next_ids(table, len(olds)), strict=True))
        else:
            for old in olds:
                key = _uuid(old, label)
                if key in ids.uuids:
                    raise ArchiveRefused(message="a key appears twice", details={"table": label})
                ids.uuids[key] = str(uuid.uuid4())
    for table in tenant_tables():  # tables absent from the archive still take keys
        if table.int_pk:
            ids.int_tables.add(table.label)
    return ids


def _uuid(value, label: str) -> str:
    try:
        return str(uuid.UUID(str(value)))
    except ValueError as exc:
        raise ArchiveRefused(message="a key is not a UUID", details={"table": label}) from exc


def _next_ids(table: Table, count: int) -> list[int]:
    if not count:
        return []
    sql = "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)"
    with connection.cursor() as cursor:
        cursor.execute(
            sql, [connection.ops.quote_name(table.model._meta.db_table), table.pk.column, count]
        )
        return [row[0] for row in cursor.fetchall()]


def _check_file_names(translated: dict[str, list[dict]], tenant: Tenant) -> None:
    """A restored row names image files of its own tenant only (the source's prefix,
    rewritten): a name under another prefix would point at someone else's file."""
    prefix = image_files.tenant_prefix(tenant.pk)
    for label, columns in FILE_COLUMNS.items():
        for row in translated.get(label, []):
            for column in columns:
                value = row.get(column)
                names = value if isinstance(value, list) else [value]
                if any(isinstance(n, str) and n and not n.startswith(prefix) for n in names):
                    raise ArchiveRefused(
                        message="a row names a file outside the tenant",
                        details={"table": label, "column": column},
                    )


def _store_files(
    archive: reader.Archive, remapper: Remapper, stored: list[str], tenant: Tenant
) -> int:
    """Each file under its rewritten name (the new tenant's prefix); names must come back as
    asked, since the rows name them."""
    storage = image_files.storage()
    prefix = image_files.tenant_prefix(tenant.pk)
    for name, digest in archive.manifest["files"].items():
        new_name = remapper.text(name)
        if not new_name.startswith(prefix):
            raise ArchiveRefused(message="a file is outside the tenant", details={"file": name})
        saved = storage.save(new_name, ContentFile(archive.files[digest]))
        stored.append(saved)
        if saved != new_name:
            raise ArchiveRefused(
                message="a file's name is taken in the target", details={"file": name}
            )
    return len(archive.manifest["files"])


def _insert_all(translated: dict[str, list[dict]]) -> int:
    total = 0
    for table in tenant_tables():
        rows = translated.get(table.label) or []
        if rows:
            _insert(table, rows)
            total += len(rows)
    return total


def _checked(table: Table, rows: list[dict]) -> list[dict]:
    names = {f.attname for f in table.columns}
    for row in rows:
        if set(row) != names:
            raise ArchiveRefused(
                message="a row's columns differ from its table's", details={"table": table.label}
            )
    return rows


def _insert(table: Table, rows: list[dict]) -> None:
    """Bulk write of archive rows with PostgreSQL's COPY: values made by each field's own
    ``get_db_prep_save``, without ``pre_save`` (which would stamp ``auto_now`` times over the
    archive's). A value the table refuses (too long, out of range) is a coded refusal."""
    columns = table.columns
    quoted = ", ".join(connection.ops.quote_name(f.column) for f in columns)
    name = connection.ops.quote_name(table.model._meta.db_table)
    try:
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY {name} ({quoted}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row([_prep(f, row[f.attname]) for f in columns])
    except (DatabaseError, psycopg.Error, ValueError, TypeError) as exc:
        raise ArchiveRefused(
            message="a row does not fit its table",
            details={"table": table.label, "error": type(exc).__name__},
        ) from exc


def _prep(f, value):
    try:
        return f.get_db_prep_save(codec.decode(f, value), connection)
    except Exception as exc:  # a field's own conversion refusing the value
        raise ArchiveRefused(
            message="a value does not fit its column", details={"column": f.attname}
        ) from exc
