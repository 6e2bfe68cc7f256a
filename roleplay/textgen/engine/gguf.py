"""A GGUF file's metadata, read without loading the model: its chat template and the text of
its BOS and EOS tokens.

The format (little-endian): the magic ``GGUF``, a version (2 or 3), the tensor count and the
key-value count (both uint64), then each key (a string: uint64 length and UTF-8 bytes), its
value type (uint32) and its value; an array is an element type, a uint64 count and the
elements. Only the header is read, with every length checked against a limit before it is
trusted: a truncated file, a huge length or a value of the wrong type is a
:class:`TemplateError` (field ``gguf``), never another exception. Arrays are skipped except
the vocabulary (``tokenizer.ggml.tokens``), which gives the BOS and EOS tokens' text.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

from .jinja import JinjaTemplate, checked
from .templates import TemplateError

MAGIC = b"GGUF"
VERSIONS = (2, 3)
MAX_KEYS = 100_000
MAX_KEY_BYTES = 65_536
MAX_STRING_BYTES = 4_000_000
MAX_ARRAY_ITEMS = 10_000_000
TOKENS_KEY = "tokenizer.ggml.tokens"
TEMPLATE_KEY = "tokenizer.chat_template"
FIELD = "gguf"
_STRING, _ARRAY = 8, 9
# Fixed-size value types: struct format by type id.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}  # fmt: skip


def _fail(message: str) -> TemplateError:
    return TemplateError(f"not a readable GGUF file: {message}", FIELD)


class _Reader:
    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def take(self, size: int) -> bytes:
        data = self.stream.read(size)
        if len(data) != size:
            raise _fail("it ends early")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self, limit: int = MAX_STRING_BYTES) -> str:
        size = self.unpack("<Q")
        if size > limit:
            raise _fail(f"a string of {size} bytes (at most {limit})")
        try:
            return self.take(size).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _fail("a string that is not UTF-8") from exc

    def skip(self, size: int) -> None:
        self.stream.seek(size, 1)

    def value(self, kind: int, *, keep_array: bool = False) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind != _ARRAY:
            raise _fail(f"an unknown value type {kind}")
        item, count = self.unpack("<I"), self.unpack("<Q")
        if count > MAX_ARRAY_ITEMS:
            raise _fail(f"an array of {count} items (at most {MAX_ARRAY_ITEMS})")
        if keep_array and item == _STRING:
            return [self.string() for _ in range(count)]
        if item in _SCALARS:
            self.skip(struct.calcsize(_SCALARS[item]) * count)
            return None
        for _ in range(count):
            self.value(item)
        return None


def read_metadata(stream: BinaryIO) -> dict[str, Any]:
    """The file's key-value metadata (arrays as None, but the vocabulary's strings)."""
    reader = _Reader(stream)
    if reader.take(4) != MAGIC:
        raise _fail("it does not start with GGUF")
    version = reader.unpack("<I")
    if version not in VERSIONS:
        raise _fail(f"version {version} (known: 2, 3)")
    reader.unpack("<Q")  # tensors: not read
    keys = reader.unpack("<Q")
    if keys > MAX_KEYS:
        raise _fail(f"{keys} keys (at most {MAX_KEYS})")
    metadata: dict[str, Any] = {}
    for _ in range(keys):
        key = reader.string(MAX_KEY_BYTES)
        metadata[key] = reader.value(reader.unpack("<I"), keep_array=key == TOKENS_KEY)
    return metadata


def _special(metadata: dict[str, Any], which: str) -> str:
    index = metadata.get(f"tokenizer.ggml.{which}_token_id")
    tokens = metadata.get(TOKENS_KEY)
    if not isinstance(index, int) or isinstance(index, bool) or not isinstance(tokens, list):
        return ""
    return tokens[index] if 0 <= index < len(tokens) else ""


def template_from_metadata(metadata: dict[str, Any], name: str = "") -> JinjaTemplate:
    """The checked chat template a GGUF's metadata carries, with its BOS and EOS text."""
    source = metadata.get(TEMPLATE_KEY)
    if not isinstance(source, str) or not source.strip():
        raise TemplateError("the model file carries no chat template", FIELD)
    bos, eos = _special(metadata, "bos"), _special(metadata, "eos")
    return checked(JinjaTemplate(template=source, bos_token=bos, eos_token=eos, name=name))


def read_template(path: str | Path) -> JinjaTemplate:
    """The chat template of the GGUF file at ``path`` (TemplateError when it has none)."""
    try:
        with open(path, "rb") as stream:
            metadata = read_metadata(stream)
    except OSError as exc:
        raise _fail(f"it cannot be opened ({exc.strerror})") from exc
    return template_from_metadata(metadata, name=Path(path).stem)
