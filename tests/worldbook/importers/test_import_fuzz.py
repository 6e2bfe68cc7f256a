"""Fuzzing the importers: whatever bytes arrive (random, a valid SillyTavern file or card with
bytes flipped, cut or repeated, JSON of any shape in the places a file has objects), the
import path the API runs (parse, then validate as a book, then the publish checks) either
gives a publishable book or raises a worldbook error with a stable code and JSON details.
Any other exception is a bug (a 500 at the API)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.worldbook.importers.wb_import_builders import (
    b64_json,
    card,
    card_entry,
    pillow_png,
    st_entry,
    st_file,
)
from worldbook import services
from worldbook.errors import WorldbookError

FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

NOVELAI = json.dumps(
    {"lorebookVersion": 5, "entries": [{"text": "The gate.", "keys": ["gate"], "enabled": True}]}
).encode()
ST = st_file(st_entry(0, key=["gate"], content="The gate."), st_entry(1, content="Lore."))
CARD_JSON = json.dumps(card("chara_card_v2", {"entries": [card_entry(0, content="x")]})).encode()
CARD_PNG = pillow_png({"chara": b64_json(card("chara_card_v2", {"entries": [card_entry(1)]}))})
SEEDS = [
    ("world.json", ST),
    ("card.json", CARD_JSON),
    ("card.png", CARD_PNG),
    ("world.lorebook", NOVELAI),
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def parses_or_fails_cleanly(filename: str, data: bytes) -> None:
    try:
        result = services.parse_upload(filename, data)
        services.validate_book_for_publish(services.parse_book(result.book))
    except WorldbookError as failure:
        assert failure.code and isinstance(failure.details, dict)
        json.dumps(failure.to_dict())  # the API can render it


@FUZZ
@given(name=st.sampled_from(["x.json", "x.png", "x.txt", "x"]), data=st.binary(max_size=2048))
def test_random_bytes(name, data):
    parses_or_fails_cleanly(name, data)


@FUZZ
@given(
    seed=st.sampled_from(SEEDS),
    edits=st.lists(
        st.tuples(st.sampled_from(["flip", "cut", "repeat"]), st.integers(0, 10**6)),
        min_size=1,
        max_size=6,
    ),
)
def test_valid_files_with_bytes_changed(seed, edits):
    name, data = seed
    buffer = bytearray(data)
    for kind, where in edits:
        if not buffer:
            break
        at = where % len(buffer)
        if kind == "flip":
            buffer[at] ^= 0xFF
        elif kind == "cut":
            del buffer[at:]
        else:
            buffer[at:at] = buffer[at : at + 64]
    parses_or_fails_cleanly(name, bytes(buffer))


@FUZZ
@given(
    value=json_values,
    where=st.sampled_from(
        ["entries", "entry", "card", "book", "field", "novelai", "agnai", "risuai", "risu_field"]
    ),
)
def test_json_of_any_shape_where_objects_belong(value, where):
    if where == "entries":
        doc = {"entries": value}
    elif where == "entry":
        doc = {"entries": {"0": value}}
    elif where == "card":
        doc = {"spec": "chara_card_v2", "data": value}
    elif where == "book":
        doc = {"spec": "chara_card_v3", "data": {"name": "c", "character_book": value}}
    elif where == "novelai":
        doc = {"lorebookVersion": 5, "entries": [value, {"text": "x", "contextConfig": value}]}
    elif where == "agnai":
        doc = {"kind": "memory", "entries": [value, {"entry": "x", "priority": value}]}
    elif where == "risuai":
        doc = {"type": "risu", "data": value}
    elif where == "risu_field":
        doc = {"type": "risu", "data": [{"key": value, "secondkey": value, "useRegex": True}]}
    else:
        doc = {"entries": {"0": {**st_entry(0), "key": value, "position": value}}}
    parses_or_fails_cleanly("fuzz.json", json.dumps(doc, allow_nan=True).encode())
