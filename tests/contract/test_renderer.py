"""Every answer renders: what orjson refuses is encoded another way, never a 500.

- A lone UTF-16 surrogate: JSON can spell one (``"\\ud800"``); a choice field quoted it back
  in its message and the orjson renderer refused to encode the answer.
- An integer beyond 64 bits: a JSON field's ``1e20`` comes back from PostgreSQL's jsonb as
  the integer ``100000000000000000000`` (found by the schema fuzzer).

The fix is in the renderer, so every field and every message is covered, not only the ones
a fuzzer found first.
"""

from __future__ import annotations

import json

import orjson
import pytest

from console.renderers import FastJSONRenderer
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff

LONE = "\ud800"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/conversations/", {"status": LONE}),
        ("/api/v1/model-configs/", {"name": "m", "model": "m", "provider": LONE}),
        ("/api/v1/model-configs/", {"name": "m", "model": "m", "provider": "\udfff" + "x" * 50}),
    ],
)
def test_a_lone_surrogate_in_a_choice_field_is_a_clean_400(api, path, body):
    before = db_snapshot()
    # json.dumps writes the surrogate as a \u escape, the way a client sends it.
    response = api.generic("POST", path, json.dumps(body), content_type="application/json")
    error = assert_error(response, 400, "validation_error")
    assert "\ufffd" in error["message"]  # quoted back, as the replacement character
    assert snapshot_diff(before, db_snapshot()) == []


def test_the_renderer_repairs_any_string_keys_included():
    data = {"a": [f"{LONE} is not a valid choice."], "\udc00k": {"n": 1, "t": (LONE,)}}
    rendered = FastJSONRenderer().render(data)
    rendered.decode("utf-8")  # strict UTF-8
    assert orjson.loads(rendered) == {
        "a": ["\ufffd is not a valid choice."],
        "\ufffdk": {"n": 1, "t": ["\ufffd"]},
    }


def test_valid_pairs_and_plain_text_are_untouched():
    data = {"emoji": "\U0001f600", "text": "铜钥匙", "none": None}
    assert orjson.loads(FastJSONRenderer().render(data)) == data


def test_a_huge_number_stored_in_a_json_field_reads_back(api, world):
    path = f"/api/v1/model-configs/{world.objects.model_config.pk}/"
    response = api.patch(path, {"extra": {"big": 1e20, "small": 1}}, format="json")
    assert response.status_code == 200, response.content[:300]
    config = type(world.objects.model_config).objects.get(pk=world.objects.model_config.pk)
    assert type(config.extra["big"]) is int  # what jsonb made of 1e20, beyond orjson's range
    again = api.get(path)  # the row is read back from the database
    assert again.status_code == 200, again.content[:300]
    assert again.json()["extra"] == {"big": 10**20, "small": 1}


def test_the_renderer_writes_any_integer():
    data = {"big": 10**20, "negative": -(10**30), "text": LONE}
    assert json.loads(FastJSONRenderer().render(data)) == {
        "big": 10**20,
        "negative": -(10**30),
        "text": "\ufffd",
    }
