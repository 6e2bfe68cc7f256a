"""Character files of older tools: Pygmalion/Gradio JSON and text-generation-webui YAML
become the CCv1 card SillyTavern makes of them; a broken or hostile YAML file is a 400."""

from __future__ import annotations

import json

import pytest

from roleplay.characters.cards.errors import CardFailure
from roleplay.characters.cards.read import read_card_file
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff
from tests.characters.test_card_import import imported, send

PYGMALION = {
    "char_name": "Mira",
    "char_persona": "A lighthouse keeper.",
    "char_greeting": "Welcome to Greyport.",
    "world_scenario": "A storm is coming.",
    "example_dialogue": "<START>\nYou: Hi\nMira: Hello.",
    "tool_version": "1.2",
}

WEBUI_YAML = b"""name: Mira
greeting: |-
  *looks up* Welcome to Greyport.
context: |-
  Mira is a lighthouse keeper.
  She speaks softly.
created: 2023-05-01
"""


def test_a_pygmalion_json_character():
    card = read_card_file("mira.json", json.dumps(PYGMALION).encode())
    assert card.spec == "ccv1" and card.format == "ccv1_json"
    assert card.card["name"] == "Mira" and card.card["first_mes"] == "Welcome to Greyport."
    assert card.card["description"] == "A lighthouse keeper."
    assert card.card["scenario"] == "A storm is coming."
    assert card.card["mes_example"].startswith("<START>")
    assert card.card["tool_version"] == "1.2"  # kept as the card's unknown fields are
    assert [code for code, _ in card.warnings] == ["legacy_card"]


def test_a_text_generation_webui_yaml_character():
    card = read_card_file("Mira.yaml", WEBUI_YAML)
    assert card.format == "ccv1_yaml"
    assert card.card == {
        "name": "Mira",
        "description": "Mira is a lighthouse keeper.\nShe speaks softly.",
        "first_mes": "*looks up* Welcome to Greyport.",
    }  # the date, which is not JSON, is not carried


@pytest.mark.parametrize(
    "data",
    [
        b"name: [unclosed",
        b"- a\n- b\n",
        b"\xff\xfe",
        b'a: &a ["x","x"]\nb: &b [*a,*a]\nc: &c [*b,*b]\nd: [*c,*c]\nname: M\ncontext: x\n',
        b"!!python/object/apply:os.system ['true']",
        b"[" * 20_000,
    ],
    ids=["unclosed", "a-list", "not-utf8", "aliases", "python-tag", "deep"],
)
def test_a_yaml_file_that_is_not_a_character_is_refused(data):
    try:
        card = read_card_file("x.yml", data)
    except CardFailure as failure:
        assert failure.code in ("invalid_yaml", "unsupported_format")
    else:  # the alias file is a character, without the expanded fields
        assert card.card == {"name": "M", "description": "x", "first_mes": ""}


def test_the_api_imports_both(api):
    body = imported(api, json.dumps(PYGMALION).encode(), "mira.json")
    assert body["character"]["name"] == "Mira"
    assert body["character"]["first_message"] == "Welcome to Greyport."
    body = imported(api, WEBUI_YAML, "Mira.yaml")
    assert body["character"]["description"].startswith("Mira is a lighthouse keeper.")


def test_a_broken_yaml_upload_writes_nothing(api):
    before = db_snapshot()
    assert_error(send(api, b"name: [unclosed", "m.yaml"), 400, "invalid_yaml")
    assert snapshot_diff(before, db_snapshot()) == []
