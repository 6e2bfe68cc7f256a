"""Reading an uploaded archive without trusting it.

Checks, in order, before anything is written: a readable zip; at most ``max_entries`` entries;
names that are plain relative paths (no ``..``, no leading ``/``, no backslash, no drive, no NUL)
and each only once; only the names a backup has (``manifest.json``, ``tables/<label>.jsonl``,
``files/<sha256>``); stated sizes under the caps and each entry's inflated bytes counted while
read (a zip bomb that lies about its sizes stops at the cap); a manifest of this format version;
rows that are JSON objects, one a line, with no lone surrogate or NUL in any text, no number
with more than ``max_int_digits`` digits and no NaN or Infinity; row counts and file hashes as
the manifest states them.
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import IO, Any

from . import manifest as manifest_format
from .errors import ArchiveRefused, ArchiveTooLarge
from .limits import DEFAULT_LIMITS, Limits

MANIFEST = "manifest.json"
TABLES = "tables/"
FILES = "files/"
CHUNK = 1 << 20


@dataclass
class Archive:
    manifest: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)  # sha256 -> bytes


def read(source: bytes | IO[bytes], limits: Limits = DEFAULT_LIMITS) -> Archive:
    """The checked content of an archive (bytes or a binary file); raises ``ArchiveRefused``
    or ``ArchiveTooLarge`` on the first rule it breaks."""
    stream = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
    try:
        with zipfile.ZipFile(stream) as zf:
            infos = zf.infolist()
            _check_names(infos, limits)
            raw_manifest = _inflate(zf, _only(infos, MANIFEST), limits)
            manifest = manifest_format.parse(_json(raw_manifest, MANIFEST, limits))
            archive = Archive(manifest=manifest)
            _read_tables(zf, infos, archive, limits)
            _read_files(zf, infos, archive, limits)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as exc:
        raise ArchiveRefused(message=f"not a readable zip archive ({type(exc).__name__})") from exc
    except (OSError, ValueError, RuntimeError, zlib.error, struct.error) as exc:  # CRC, encryption
        raise ArchiveRefused(message="the zip archive is damaged") from exc
    return archive


def _check_names(infos: list[zipfile.ZipInfo], limits: Limits) -> None:
    if len(infos) > limits.max_entries:
        raise ArchiveTooLarge(
            message="too many entries", details={"max_entries": limits.max_entries}
        )
    seen: set[str] = set()
    total = 0
    for info in infos:
        name = info.filename
        if not _safe_name(name):
            raise ArchiveRefused(
                message="an entry's name is not a plain relative path", details={"name": name[:120]}
            )
        if name in seen:
            raise ArchiveRefused(message="an entry appears twice", details={"name": name[:120]})
        seen.add(name)
        if not (name == MANIFEST or _table_label(name) or _file_digest(name)):
            raise ArchiveRefused(
                message="an entry a backup does not have", details={"name": name[:120]}
            )
        if info.flag_bits & 0x1:
            raise ArchiveRefused(
                message="encrypted entries are not read", details={"name": name[:120]}
            )
        total += info.file_size
        if info.file_size > limits.max_entry_bytes or total > limits.max_total_bytes:
            raise ArchiveTooLarge(
                message="the archive inflates past the size cap",
                details={"max_total_bytes": limits.max_total_bytes},
            )
    if MANIFEST not in seen:
        raise ArchiveRefused(message="the archive has no manifest.json")


def _safe_name(name: str) -> bool:
    if not name or len(name) > 300 or "\\" in name or "\x00" in name or name.startswith("/"):
        return False
    if len(name) > 1 and name[1] == ":":
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def _table_label(name: str) -> str | None:
    if name.startswith(TABLES) and name.endswith(".jsonl"):
        label = name[len(TABLES) : -len(".jsonl")]
        return label if manifest_format.LABEL.match(label) else None
    return None


def _file_digest(name: str) -> str | None:
    digest = name[len(FILES) :] if name.startswith(FILES) else ""
    return digest if manifest_format.SHA256.match(digest) else None


def _only(infos: list[zipfile.ZipInfo], name: str) -> zipfile.ZipInfo:
    return next(info for info in infos if info.filename == name)


def _inflate(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limits: Limits) -> bytes:
    """The entry's bytes, refusing more than it states or than the caps allow."""
    cap = min(info.file_size, limits.max_entry_bytes)
    out = bytearray()
    with zf.open(info) as handle:
        while chunk := handle.read(CHUNK):
            out += chunk
            if len(out) > cap:
                raise ArchiveTooLarge(
                    message="an entry inflates past its stated size",
                    details={"name": info.filename},
                )
    if (
        info.compress_size
        and len(out) > 1 << 20
        and len(out) / info.compress_size > limits.max_ratio
    ):
        raise ArchiveTooLarge(
            message="an entry's compression ratio is a zip bomb's", details={"name": info.filename}
        )
    return bytes(out)


def _read_tables(zf: zipfile.ZipFile, infos: list, archive: Archive, limits: Limits) -> None:
    stated = archive.manifest["tables"]
    present = {label: info for info in infos if (label := _table_label(info.filename))}
    if set(present) != set(stated):
        missing = sorted(set(stated) ^ set(present))[:10]
        raise ArchiveRefused(
            message="the tables do not match the manifest", details={"tables": missing}
        )
    for label, info in present.items():
        text = _inflate(zf, info, limits)
        rows = [_row(line, info.filename, limits) for line in text.splitlines() if line.strip()]
        if len(rows) != stated[label]["rows"]:
            raise ArchiveRefused(
                message="a table's row count differs from the manifest", details={"table": label}
            )
        archive.tables[label] = rows


def _read_files(zf: zipfile.ZipFile, infos: list, archive: Archive, limits: Limits) -> None:
    wanted = set(archive.manifest["files"].values())
    for info in infos:
        digest = _file_digest(info.filename)
        if digest is None:
            continue
        data = _inflate(zf, info, limits)
        if hashlib.sha256(data).hexdigest() != digest:
            raise ArchiveRefused(
                message="a file's bytes do not match its hash", details={"name": info.filename}
            )
        archive.files[digest] = data
    if missing := wanted - set(archive.files):
        raise ArchiveRefused(
            message="the manifest names files the archive lacks",
            details={"files": sorted(missing)[:10]},
        )


def _row(line: bytes, name: str, limits: Limits) -> dict[str, Any]:
    value = _json(line, name, limits)
    if not isinstance(value, dict):
        raise ArchiveRefused(message="a row is not a JSON object", details={"name": name})
    return value


def _json(raw: bytes, name: str, limits: Limits) -> Any:
    def bad_constant(token: str) -> Any:
        raise ArchiveRefused(
            message=f"{token} is not a number a backup holds", details={"name": name}
        )

    def checked_int(token: str) -> int:
        if len(token.lstrip("-")) > limits.max_int_digits:
            raise ArchiveRefused(message="a number is too large", details={"name": name})
        return int(token)

    def checked_float(token: str) -> float:
        if len(token) > 64:
            raise ArchiveRefused(message="a number is too long", details={"name": name})
        value = float(token)
        if value in (float("inf"), float("-inf")):
            raise ArchiveRefused(message="a number is too large", details={"name": name})
        return value

    try:
        value = json.loads(
            raw.decode("utf-8"),
            parse_constant=bad_constant,
            parse_int=checked_int,
            parse_float=checked_float,
        )
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ArchiveRefused(message="not valid UTF-8 JSON", details={"name": name}) from exc
    _check_text(value, name)
    return value


def _check_text(value: Any, name: str) -> None:
    """No lone surrogate (not UTF-8) and no NUL (PostgreSQL text refuses it), keys included."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item or not _utf8(item):
                raise ArchiveRefused(
                    message="a text holds NUL or a lone surrogate", details={"name": name}
                )
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
