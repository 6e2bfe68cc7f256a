"""A column's value as archive JSON and back: the one place that knows how each column type
travels (UUIDs and times as text, bytes as base64, vectors as lists of floats).

The same encoding feeds the content hashes (``verify``), so a restored row hashes as its
source row once its ids are mapped back."""

from __future__ import annotations

import base64
import datetime
import decimal
import hashlib
import json
import uuid
from typing import Any

from django.db import models

BINARY = ("BinaryField",)


def encode(f: models.Field, value: Any) -> Any:
    """``value`` as read by the ORM, as JSON."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if hasattr(value, "tolist"):  # pgvector's numpy arrays
        return [float(x) for x in value.tolist()]
    if type(f).__name__ == "VectorField":
        return [float(x) for x in value]
    return value


def decode(f: models.Field, value: Any) -> Any:
    """An archive value as the Python value the field saves."""
    if value is None:
        return None
    kind = f.get_internal_type()
    if kind in BINARY:
        return base64.b64decode(value, validate=True)
    if kind in ("JSONField", "ArrayField") or type(f).__name__ in (
        "VectorField",
        "SearchVectorField",
    ):
        return value
    return f.to_python(value)


def hash_lines(lines: list[str]) -> str:
    """One table's content hash: order-free, over its canonical JSON rows."""
    digest = hashlib.sha256()
    for line in sorted(lines):
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def canonical(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
