"""GGUF headers written for tests: the format's typed key-value pairs, as a model file
starts (no tensors follow; the reader never reads them)."""

from __future__ import annotations

import struct
from typing import Any


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _value(value: Any) -> tuple[int, bytes]:
    if isinstance(value, bool):
        return 7, struct.pack("<?", value)
    if isinstance(value, int):
        return 4, struct.pack("<I", value)
    if isinstance(value, float):
        return 6, struct.pack("<f", value)
    if isinstance(value, str):
        return 8, _string(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return 9, struct.pack("<IQ", 8, len(value)) + b"".join(_string(v) for v in value)
    if isinstance(value, list):
        return 9, struct.pack("<IQ", 6, len(value)) + struct.pack(f"<{len(value)}f", *value)
    raise TypeError(type(value))


def gguf_bytes(metadata: dict[str, Any], *, version: int = 3, tensors: int = 0) -> bytes:
    """A GGUF header holding ``metadata`` (ints as uint32, floats and float lists as f32,
    strings, string lists)."""
    out = [b"GGUF", struct.pack("<IQQ", version, tensors, len(metadata))]
    for key, value in metadata.items():
        kind, data = _value(value)
        out += [_string(key), struct.pack("<I", kind), data]
    return b"".join(out)


def raw_gguf(keys: int, *pairs: tuple[str, int, bytes], version: int = 3) -> bytes:
    """A header claiming ``keys`` pairs, then ``pairs`` (key, type id, value bytes) as
    given: for damaged files."""
    out = [b"GGUF", struct.pack("<IQQ", version, 0, keys)]
    out += [_string(key) + struct.pack("<I", kind) + data for key, kind, data in pairs]
    return b"".join(out)
