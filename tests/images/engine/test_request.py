"""The asset tool's request rules: ±1 at every limit, and hostile values in every position."""

from __future__ import annotations

import pytest

from images.engine import request as r
from images.errors import Invalid

BASE = {"prompt": "a copper key on a table", "image_config": "my-config"}


def refused(body) -> Invalid:
    with pytest.raises(Invalid) as caught:
        r.parse_asset_request(body)
    return caught.value


def codes(body) -> set[tuple[str, str]]:
    return {(v.field, v.code) for v in r.violations(body)}


def test_a_minimal_request_is_accepted_with_the_backend_defaults():
    got = r.parse_asset_request(dict(BASE))
    assert got == r.AssetRequest(prompt=BASE["prompt"], image_config="my-config")


def test_every_field_at_its_upper_limit_is_accepted():
    body = {
        "prompt": "é" * (r.MAX_PROMPT_BYTES // 2),  # 2 bytes each: exactly the limit
        "image_config": "c" * r.MAX_CONFIG_REF_BYTES,
        "reference_images": [f"https://img.example/{i}.png" for i in range(9)],
        "count": 8,
        "width": 2**53 - 1,
        "height": 2**53 - 1,
    }
    got = r.parse_asset_request(body)
    assert len(got.reference_images) == 9 and got.count == 8 and got.width == 2**53 - 1


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"prompt": "x" * (r.MAX_PROMPT_BYTES + 1)}, "prompt", "too_long"),
        ({"prompt": "é" * (r.MAX_PROMPT_BYTES // 2) + "x"}, "prompt", "too_long"),
        ({"image_config": "c" * (r.MAX_CONFIG_REF_BYTES + 1)}, "image_config", "too_long"),
        ({"image_config": "é" * 128 + "c"}, "image_config", "too_long"),
        ({"reference_images": [f"https://a.example/{i}" for i in range(10)]},
         "reference_images", "too_many"),
        ({"count": 9}, "count", "out_of_range"),
        ({"count": 0}, "count", "out_of_range"),
        ({"width": 0}, "width", "out_of_range"),
        ({"height": 0}, "height", "out_of_range"),
        ({"width": 2**53}, "width", "out_of_range"),
        ({"height": 2**53}, "height", "out_of_range"),
        ({"width": -1}, "width", "out_of_range"),
    ],
)  # fmt: skip
def test_one_past_each_limit_is_a_422_naming_the_field(body, field, code):
    error = refused({**BASE, **body})
    assert (error.code, error.details["field"]) == (code, field)
    assert error.kind == "invalid"


def test_the_lower_limits_are_accepted():
    got = r.parse_asset_request({**BASE, "prompt": "x", "count": 1, "width": 1, "height": 1,
                                 "image_config": "c", "reference_images": []})  # fmt: skip
    assert (got.count, got.width, got.height, got.reference_images) == (1, 1, 1, ())


@pytest.mark.parametrize("prompt", ["", " ", "\n\t", None])
def test_an_empty_or_missing_prompt_is_required(prompt):
    body = dict(BASE, prompt=prompt)
    assert ("prompt", "field_required") in codes(body)


def test_a_missing_config_reference_is_required():
    assert codes({"prompt": "x"}) == {("image_config", "field_required")}


@pytest.mark.parametrize(
    "url",
    [
        "ftp://a.example/x.png",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:image/png;base64,AAAA",
        "https://user:pw@a.example/x.png",
        "https://user@a.example/x.png",
        "https://:pw@a.example/x.png",
        "https:///x.png",
        "https://a.example:notaport/x.png",
        " https://a.example/x.png",
        "https://a.example/x y.png",
        "https://a.example/" + "x" * r.MAX_REFERENCE_URL_BYTES,
        "//a.example/x.png",
    ],
)
def test_a_reference_url_must_be_plain_http_or_https(url):
    found = codes({**BASE, "reference_images": [url]})
    assert len(found) == 1 and next(iter(found))[0] == "reference_images.0"


def test_http_and_https_in_any_case_are_accepted():
    got = r.parse_asset_request(
        {**BASE, "reference_images": ["HTTP://a.example/1", "https://b.example:8443/2?x=1"]}
    )
    assert got.reference_images == ("HTTP://a.example/1", "https://b.example:8443/2?x=1")


def test_a_duplicated_reference_url_is_refused():
    urls = ["https://a.example/1.png", "https://a.example/1.png"]
    assert codes({**BASE, "reference_images": urls}) == {("reference_images.1", "duplicate")}


HOSTILE_TEXT = ["\ud800", "\udfff", "a\x00b", "\udbff\udc00\ud800"]


@pytest.mark.parametrize("text", HOSTILE_TEXT)
@pytest.mark.parametrize("field", ["prompt", "image_config"])
def test_text_the_database_cannot_store_is_invalid_text(field, text):
    assert codes({**BASE, field: f"ok {text}"}) == {(field, "invalid_text")}


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_hostile_text_in_a_reference_url(text):
    assert codes({**BASE, "reference_images": [f"https://a.example/{text}"]}) == {
        ("reference_images.0", "invalid_text")
    }


def test_a_300000_character_prompt_is_too_long_not_a_crash():
    assert codes({**BASE, "prompt": "x" * 300_000}) == {("prompt", "too_long")}
    assert codes({**BASE, "image_config": "x" * 300_000}) == {("image_config", "too_long")}


WRONG = [1, 1.5, True, None, [], {}, ["x"], {"a": 1}, "text", 2.0, -(2**63), 10**30]


@pytest.mark.parametrize("value", WRONG, ids=repr)
@pytest.mark.parametrize(
    "field", ["prompt", "image_config", "reference_images", "count", "width", "height"]
)
def test_a_wrong_json_type_in_any_position_is_refused_or_ignored_cleanly(field, value):
    body = {**BASE, field: value}
    found = r.violations(body)
    valid = {
        "prompt": isinstance(value, str),
        "image_config": isinstance(value, str),
        "reference_images": value in (None, []),
        "count": value is None or (type(value) is int and 1 <= value <= 8),
        "width": value is None or (type(value) is int and 1 <= value < 2**53),
        "height": value is None or (type(value) is int and 1 <= value < 2**53),
    }[field]
    assert (not found) == valid, found
    for problem in found:
        assert problem.field.startswith(field) and problem.code


@pytest.mark.parametrize("item", WRONG, ids=repr)
def test_a_wrong_type_inside_the_reference_list(item):
    found = codes({**BASE, "reference_images": [item]})
    assert found and all(field == "reference_images.0" for field, _ in found)


@pytest.mark.parametrize("body", [None, [], "x", 1, [BASE], True])
def test_a_body_that_is_not_an_object(body):
    error = refused(body)
    assert (error.code, error.details["field"]) == ("invalid_body", "body")


def test_unknown_fields_and_hostile_keys_are_named():
    found = codes({**BASE, "size": "1024x1024", "\ud800": 1, "a\x00": 2})
    assert ("size", "unknown_field") in found and len(found) == 3


def test_every_violation_is_listed_the_first_one_decides_the_code():
    error = refused({"prompt": "", "count": 99, "width": "wide"})
    fields = [e["field"] for e in error.details["errors"]]
    assert fields == ["prompt", "image_config", "count", "width"]
    assert error.code == "field_required" and error.details["field"] == "prompt"
