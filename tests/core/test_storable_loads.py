"""``console.storable.loads``: JSON a client typed or sent outside the API body parser, held
to that parser's bounds and to what the database can store."""

from __future__ import annotations

import pytest

from console.storable import MAX_JSON_DEPTH, UnstorableText, loads


def test_a_plain_value_reads_as_json_does():
    assert loads('{"a": [1, 2.5, "é", null, true]}') == {"a": [1, 2.5, "é", None, True]}
    assert loads(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}  # bytes, with a byte-order mark


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5000 + "]" * 5000,  # RecursionError inside json.loads
        "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1),
        "NaN",
        '{"a": -Infinity}',
        "1e400",
        str(2**63),
        str(-(2**63) - 1),
        "not json",
    ],
)
def test_past_the_bounds_is_a_value_error(text):
    with pytest.raises(ValueError) as caught:
        loads(text)
    assert not isinstance(caught.value, UnstorableText)


def test_the_deepest_value_allowed_reads():
    text = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert loads(text) is not None
    assert loads(str(2**63 - 1)) == 2**63 - 1


@pytest.mark.parametrize(
    "text", ['"\\u0000"', '["\\ud800"]', '{"\\udfff": 1}', '{"a": {"b": "x\\u0000y"}}']
)
def test_text_the_database_cannot_store_is_named(text):
    with pytest.raises(UnstorableText, match="NUL|surrogate"):
        loads(text, "box")
