"""The manifest (``manifest.json``): the format and its version, the source tenant, the tables
with their row counts and content hashes, the files, and the statement that no secret is in.

A reader accepts exactly its own format version: an archive of another version is refused
with ``archive_version`` rather than half understood."""

from __future__ import annotations

import re
from typing import Any

from .errors import ArchiveRefused

FORMAT = "roleplay-tenant-backup"
VERSION = 1
SECRETS_NOTE = (
    "API keys and tokens are never stored: model, image and tool configurations keep only the "
    "name of the environment variable that holds a key (api_key_env), which the target "
    "installation must define; API tokens, console users and their memberships are not exported."
)
LABEL = re.compile(r"^[a-z_][a-z0-9_]{0,62}\.[A-Za-z][A-Za-z0-9]{0,62}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def build(
    *, tenant_id: str, tenant_name: str, created_at: str, tables: dict, files: dict
) -> dict[str, Any]:
    """The manifest of an export: ``tables`` maps a model label to ``{"rows", "sha256"}``,
    ``files`` maps a stored file name to the SHA-256 of its bytes."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "created_at": created_at,
        "source_tenant": {"id": tenant_id, "name": tenant_name},
        "secrets": SECRETS_NOTE,
        "tables": tables,
        "files": files,
    }


def parse(data: Any) -> dict[str, Any]:
    """Check a decoded manifest's shape; return it. Raises ``ArchiveRefused``."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ArchiveRefused(message="manifest.json is not a tenant backup manifest")
    if data.get("version") != VERSION:
        raise ArchiveRefused(
            "archive_version",
            f"this archive's format version is not {VERSION}",
            {"version": repr(data.get("version"))[:40], "supported": VERSION},
        )
    tables, files = data.get("tables"), data.get("files")
    if not isinstance(tables, dict) or not isinstance(files, dict):
        raise ArchiveRefused(message="manifest.json lacks its tables or files")
    for label, info in tables.items():
        rows = info.get("rows") if isinstance(info, dict) else None
        if not LABEL.match(label) or not isinstance(rows, int) or isinstance(rows, bool):
            raise ArchiveRefused(
                message="manifest.json names a table badly", details={"table": label[:80]}
            )
        if rows < 0:
            raise ArchiveRefused(
                message="manifest.json counts rows badly", details={"table": label}
            )
    for name, digest in files.items():
        if not isinstance(digest, str) or not SHA256.match(digest) or not _file_name_ok(name):
            raise ArchiveRefused(
                message="manifest.json names a file badly", details={"file": str(name)[:80]}
            )
    source = data.get("source_tenant")
    if not isinstance(source, dict) or not isinstance(source.get("id"), str):
        raise ArchiveRefused(message="manifest.json lacks its source tenant")
    return data


def _file_name_ok(name: str) -> bool:
    return (
        0 < len(name) <= 300
        and not name.startswith("/")
        and "\\" not in name
        and ".." not in name.split("/")
        and "\x00" not in name
    )
