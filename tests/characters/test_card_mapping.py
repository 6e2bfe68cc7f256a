"""Card fields <-> character fields (pure): every field mapped, kept or dropped with a
report, and an export read back gives the same fields."""

from __future__ import annotations

import pytest

from roleplay.characters.cards.build import build_card
from roleplay.characters.cards.errors import CardFailure
from roleplay.characters.cards.images import default_avatar
from roleplay.characters.cards.limits import CARD_EXTENSION
from roleplay.characters.cards.mapping import card_to_fields, fields_to_card
from roleplay.characters.cards.read import read_card_file
from roleplay.characters.cards.report import CardReport
from tests.characters.cardfiles import v2_card, v3_card


def mapped(card: dict, spec: str) -> tuple[dict, dict]:
    report = CardReport(spec, "0" * 64)
    return card_to_fields(card, spec, report), report.to_dict()


def test_every_ccv2_field_has_a_column():
    fields, report = mapped(v2_card(), "ccv2")
    assert fields == {
        "name": "Mira",
        "description": "Keeper of the Greyport lighthouse.",
        "personality": "Dry-humoured, observant.",
        "scenario": "A foggy night at the lighthouse.",
        "first_message": "A visitor, at this hour?",
        "example_dialogues": "<START>\n{{char}}: Tea?",
        "alternate_greetings": ["The lamp needs trimming.", "You again?"],
        "system_prompt": "You are {{char}}.",
        "post_history_instructions": "Stay in character.",
        "creator_notes": "Best with slow scenes.",
        "tags": ["lighthouse", "fantasy"],
        "creator": "anon",
        "character_version": "1.2",
        "extensions": {"talkativeness": "0.5", "fav": False, "depth_prompt": {"depth": 4}},
    }
    assert {m["card_field"] for m in report["mapped"]} == {f"data.{k}" for k in v2_card()["data"]}
    assert report["kept"] == report["dropped"] == []


def test_ccv3_extras_and_unknown_fields_are_kept_in_the_card_extension():
    card = v3_card(future_field={"a": 1})
    card["data"]["extensions"]["some_tool"] = {"x": [1, 2]}
    fields, report = mapped(card, "ccv3")
    kept = fields["extensions"].pop(CARD_EXTENSION)
    assert fields["extensions"] == {**v2_card()["data"]["extensions"], "some_tool": {"x": [1, 2]}}
    data = card["data"]
    assert kept == {
        "nickname": data["nickname"],
        "group_only_greetings": data["group_only_greetings"],
        "creator_notes_multilingual": data["creator_notes_multilingual"],
        "source": data["source"],
        "assets": data["assets"],
        "creation_date": data["creation_date"],
        "modification_date": data["modification_date"],
        "unknown_fields": {"future_field": {"a": 1}},
    }
    assert {k["card_field"] for k in report["kept"]} == {
        "data.nickname",
        "data.group_only_greetings",
        "data.creator_notes_multilingual",
        "data.source",
        "data.assets",
        "data.creation_date",
        "data.modification_date",
        "data.future_field",
    }


def test_top_level_copies_are_dropped_and_reported():
    card = {**v2_card(), "name": "Mira", "first_mes": "old copy", "talkativeness": "0.5"}
    _, report = mapped(card, "ccv2")
    assert {d["card_field"] for d in report["dropped"]} == {"name", "first_mes", "talkativeness"}


def test_odd_values_are_coerced_or_dropped_with_a_reason():
    card = v2_card(tags="solo", alternate_greetings=["ok", 3], character_version=2, creator=None)
    card["data"]["extensions"] = "nope"
    fields, report = mapped(card, "ccv2")
    assert fields["tags"] == ["solo"]
    assert fields["alternate_greetings"] == ["ok"]
    assert fields["character_version"] == "2"
    assert fields["creator"] == ""
    assert fields["extensions"] == {}
    dropped = {d["card_field"] for d in report["dropped"]}
    assert dropped == {"data.alternate_greetings[1]", "data.extensions"}
    codes = {w["code"] for w in report["warnings"]}
    assert {"text_as_list", "number_as_text"} <= codes


def test_a_name_that_is_not_text_is_refused():
    with pytest.raises(CardFailure) as caught:
        mapped(v2_card(name=["x"]), "ccv2")
    assert caught.value.code == "invalid_card"


def test_tags_are_trimmed_and_deduplicated():
    fields, _ = mapped(v2_card(tags=[" a", "a", "", "b "]), "ccv2")
    assert fields["tags"] == ["a", "b"]


def test_a_ccv1_card_maps_its_top_level():
    fields, report = mapped(
        {"name": "Old", "first_mes": "Hi.", "creatorcomment": "notes", "chat": "x"}, "ccv1"
    )
    assert fields["name"] == "Old" and fields["creator_notes"] == "notes"
    assert fields["extensions"][CARD_EXTENSION]["unknown_fields"] == {"chat": "x"}
    assert report["warnings"][0]["code"] == "ccv1_card"


def test_a_newer_spec_version_is_a_warning():
    _, report = mapped({**v3_card(), "spec_version": "3.5"}, "ccv3")
    assert [w["code"] for w in report["warnings"]] == ["newer_spec_version"]


@pytest.mark.parametrize("spec", ["ccv2", "ccv3"])
@pytest.mark.parametrize("fmt", ["ccv3_png", "ccv3_json", "ccv2_json"])
def test_export_then_import_gives_the_same_fields(spec, fmt):
    card = v3_card(future_field=1) if spec == "ccv3" else v2_card()
    first, _ = mapped(card, spec)
    data = build_card(first, fmt, book=None, image=default_avatar("Mira"))
    read = read_card_file(f"x.{fmt.split('_')[1]}", data)
    again, _ = mapped(read.card, read.spec)
    assert again == first


def test_ccv3_export_puts_the_extras_back_at_data_level():
    fields, _ = mapped(v3_card(future_field=1), "ccv3")
    out = fields_to_card(fields, "ccv3")
    assert out["spec"] == "chara_card_v3" and out["spec_version"] == "3.0"
    assert out["data"]["nickname"] == "Mi" and out["data"]["future_field"] == 1
    assert CARD_EXTENSION not in out["data"]["extensions"]
    v2 = fields_to_card(fields, "ccv2")
    assert "nickname" not in v2["data"] and v2["data"]["extensions"][CARD_EXTENSION]


def test_ccv3_export_always_has_group_only_greetings():
    fields, _ = mapped(v2_card(), "ccv2")
    assert fields_to_card(fields, "ccv3")["data"]["group_only_greetings"] == []


def test_the_summary_says_top_level_copies_were_ignored_not_dropped():
    """SillyTavern writes a CCv1 copy of each field beside a v2 card's ``data``; reading the
    v2 fields is not a loss, so the summary counts those copies apart from real drops."""
    from roleplay.characters.cards.report import summary

    card = {**v2_card(tags="solo", alternate_greetings=["ok", 3]), "name": "Mira", "fav": False}
    _, report = mapped(card, "ccv2")
    counts = summary(report)
    assert counts["ccv1_copies"] == 2 and counts["not_imported"] == 1
    assert counts["mapped"] == len(report["mapped"]) and counts["kept"] == len(report["kept"])
    assert summary({"mapped": [], "kept": []}) == {
        "mapped": 0,
        "kept": 0,
        "ccv1_copies": 0,
        "not_imported": 0,
    }  # an old report without the lists
