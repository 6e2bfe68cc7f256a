"""SillyTavern chat-completion presets: import with a report, export they can import, and
round trips both ways."""

from __future__ import annotations

import json

import pytest

from roleplay.prompting import presets as p
from roleplay.prompting.default_preset import default_preset
from roleplay.prompting.preset_files import (
    decode_json,
    native_file,
    read_preset_file,
)
from roleplay.prompting.sillytavern import (
    PresetFileInvalid,
    export_sillytavern,
    import_sillytavern,
)
from tests.presets.st_fixture import (
    CUSTOM_DEPTH,
    CUSTOM_RULES,
    CUSTOM_UNLISTED,
    DEFAULT_PROMPT_SHAPE,
    ORDER_100001,
    st_preset,
)


def imported(data=None):
    prompts, report = import_sillytavern(st_preset() if data is None else data)
    return p.validate_prompts(prompts), report


def by_id(prompts):
    return {x.identifier: x for x in prompts}


def test_import_follows_the_global_order_and_maps_identifiers():
    prompts, report = imported()
    placed = [x.identifier for x in prompts if x.placed]
    assert placed == [
        "main",
        CUSTOM_RULES,
        "worldInfoBefore",
        "personaDescription",
        "charDescription",
        "charPersonality",
        "scenario",
        "enhanceDefinitions",
        "auxiliary",
        "worldInfoAfter",
        "dialogueExamples",
        "chatHistory",
        "userInput",
        CUSTOM_DEPTH,
        "postHistoryInstructions",
    ]
    assert report.order == "prompt_order of character_id 100001"
    assert {"from": "nsfw", "to": "auxiliary"} in report.mapped
    assert {"from": "jailbreak", "to": "postHistoryInstructions"} in report.mapped
    assert [a["identifier"] for a in report.added] == ["userInput"]
    found = by_id(prompts)
    assert found["enhanceDefinitions"].enabled is False
    assert found[CUSTOM_RULES].enabled is True  # the order's flag wins over the prompt's
    assert found["main"].content.startswith("Write {{char}}'s next reply")


def test_in_chat_prompts_keep_depth_and_order_and_triggers_are_reported():
    prompts, report = imported()
    depth = by_id(prompts)[CUSTOM_DEPTH]
    assert depth.injection == p.AtDepth(position="at_depth", depth=2, order=90)
    assert depth.role == "user"
    assert [c["identifier"] for c in report.changed] == [CUSTOM_DEPTH]
    assert "every turn" in report.changed[0]["reason"]
    assert report.changed[0]["triggers"] == ["normal", "continue"]


def test_unlisted_prompts_are_kept_unplaced():
    prompts, report = imported()
    unused = by_id(prompts)[CUSTOM_UNLISTED]
    assert unused.injection == p.NotPlaced(position="none")
    assert report.unplaced == [CUSTOM_UNLISTED]


def test_settings_are_reported_not_applied():
    prompts, report = imported()
    settings = {s["setting"]: s for s in report.model_config_settings}
    assert settings["temperature"] == {
        "setting": "temperature",
        "value": 0.9,
        "model_config_field": "temperature",
    }
    assert settings["openai_max_tokens"]["model_config_field"] == "max_output_tokens"
    assert settings["openai_max_context"]["value"] == 16384
    assert settings["top_k"]["model_config_field"] == "extra"
    assert {"chat_completion_source", "openai_model", "impersonation_prompt"} <= set(
        report.ignored_settings
    )
    # personality_format is our wrapper; the default scenario format changes nothing.
    assert by_id(prompts)["charPersonality"].content == "[{{char}}'s personality: {{personality}}]"
    assert by_id(prompts)["scenario"].content == ""
    assert {"from": "personality_format", "to": "charPersonality wrapper"} in report.mapped
    assert "scenario_format" not in report.ignored_settings
    json.dumps(report.as_dict())  # the report is JSON as it is


def test_the_older_order_is_used_when_the_global_one_is_absent():
    data = st_preset()
    data["prompt_order"] = [o for o in data["prompt_order"] if o["character_id"] == 100000]
    prompts, report = imported(data)
    assert report.order == "prompt_order of character_id 100000"
    found = by_id(prompts)
    # Markers the order does not list are kept in the list, disabled (they are not sent).
    assert found["personaDescription"].placed and not found["personaDescription"].enabled
    assert not found[CUSTOM_RULES].placed


def test_what_cannot_map_is_reported():
    data = st_preset()
    data["prompts"] += [
        {"identifier": "groupNudge", "name": "Group Nudge", "marker": True},
        {"identifier": "main", "name": "Another main", "content": "x"},
        {"name": "No identifier", "content": "x"},
        "not an object",
    ]
    order = data["prompt_order"][1]["order"]
    order += [{"identifier": "ghost", "enabled": True}, {"identifier": "main", "enabled": False}]
    chat = next(e for e in order if e["identifier"] == "chatHistory")
    chat["enabled"] = False
    prompts, report = imported(data)
    dropped = {(d["identifier"], d["reason"].split(" ")[0]) for d in report.dropped}
    assert dropped == {
        ("groupNudge", "a"),
        ("main", "a"),
        ("None", "a"),
        ("ghost", "the"),
        ("main", "listed"),
    }
    assert by_id(prompts)["chatHistory"].enabled
    assert any(c["identifier"] == "chatHistory" for c in report.changed)


def test_a_file_without_history_or_order():
    data = {"prompts": [{"identifier": "main", "name": "Main", "content": "Hi"}], "temperature": 1}
    prompts, report = imported(data)
    assert [x.identifier for x in prompts] == ["main", "chatHistory", "userInput"]
    assert report.order.startswith("no prompt_order")
    assert [a["identifier"] for a in report.added] == ["chatHistory", "userInput"]


def test_identifiers_we_cannot_use_are_rewritten():
    data = {
        "prompts": [
            {"identifier": "my rule!", "name": "Rule", "content": "a"},
            {"identifier": "my_rule_", "name": "Other", "content": "b"},
            {"identifier": "userInput", "name": "Theirs", "content": "c"},
            {"identifier": "chatHistory", "name": "History", "marker": True},
        ]
    }
    prompts, report = imported(data)
    assert [x.identifier for x in prompts] == [
        "my_rule_",
        "my_rule_-2",
        "userInput-2",
        "chatHistory",
        "userInput",
    ]
    assert {c["identifier"]: c["to"] for c in report.changed} == {
        "my rule!": "my_rule_",
        "my_rule_": "my_rule_-2",
        "userInput": "userInput-2",
    }


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"prompts": "x"},
        {},
        {"prompts": [], "prompt_order": {}},
        {"prompts": [], "prompt_order": [{"order": 5}]},
    ],
)
def test_files_that_are_not_presets(data):
    with pytest.raises(PresetFileInvalid) as info:
        import_sillytavern(data)
    assert info.value.code == "preset_file_invalid" and info.value.kind == "bad_request"


# --- export -------------------------------------------------------------------------------


def test_round_trip_from_sillytavern():
    original = st_preset()
    prompts, _ = imported(original)
    exported, notes = export_sillytavern(prompts)
    assert notes == []
    theirs = {x["identifier"]: x for x in original["prompts"]}
    ours = {x["identifier"]: x for x in exported["prompts"]}
    assert set(ours) == set(theirs)
    for identifier, prompt in theirs.items():
        again = ours[identifier]
        assert again["name"] == prompt["name"]
        assert again["marker"] == prompt.get("marker", False)
        assert again["system_prompt"] == prompt.get("system_prompt", False)
        if not again["marker"]:
            assert (again["role"], again["content"]) == (prompt["role"], prompt["content"])
    depth = ours[CUSTOM_DEPTH]
    assert (depth["injection_position"], depth["injection_depth"], depth["injection_order"]) == (
        1,
        2,
        90,
    )
    expected = [{"identifier": i, "enabled": e} for i, e in ORDER_100001]
    assert [o["character_id"] for o in exported["prompt_order"]] == [100000, 100001]
    assert all(o["order"] == expected for o in exported["prompt_order"])
    assert exported["personality_format"] == original["personality_format"]
    again, _ = imported(exported)
    assert again == prompts


def test_the_export_has_their_default_presets_shape():
    exported, _ = export_sillytavern(default_preset().prompts)
    for prompt in exported["prompts"]:
        shape = DEFAULT_PROMPT_SHAPE["marker" if prompt["marker"] else "prompt"]
        for key, kind in shape.items():
            assert isinstance(prompt[key], kind), (prompt["identifier"], key)
        assert prompt["injection_position"] in (0, 1)
        assert isinstance(prompt["injection_depth"], int)
        assert isinstance(prompt["injection_order"], int)
    for order in exported["prompt_order"]:
        assert set(order) == {"character_id", "order"}
        assert all(set(e) == {"identifier", "enabled"} for e in order["order"])
    json.dumps(exported)


def test_round_trip_of_the_default_preset():
    """Ours -> theirs -> ours gives the same prompts but the wrappers SillyTavern has no
    setting for (each named in the notes)."""
    original = default_preset().prompts
    exported, notes = export_sillytavern(original)
    assert sorted(notes) == [
        "dialogueExamples: its wrapper has no SillyTavern setting: dropped",
        "personaDescription: its wrapper has no SillyTavern setting: dropped",
    ]
    placed = [e["identifier"] for e in exported["prompt_order"][0]["order"]]
    assert "userInput" not in placed and "jailbreak" in placed
    templates = {x["identifier"] for x in exported["prompts"]} - set(placed)
    assert templates == set(p.ROLE_TEMPLATES)
    again, report = imported(exported)
    lost = {"dialogueExamples", "personaDescription"}
    assert [x for x in again if x.identifier not in lost] == [
        x for x in original if x.identifier not in lost
    ]
    assert all(not by_id(again)[m].content for m in lost)
    assert sorted(report.unplaced) == sorted(p.ROLE_TEMPLATES)


def test_prompts_between_history_and_input_go_in_the_chat_at_depth_one():
    data = [
        {"identifier": "chatHistory", "name": "History"},
        {"identifier": "a", "name": "A", "content": "first"},
        {"identifier": "b", "name": "B", "content": "second"},
        {"identifier": "userInput", "name": "Input"},
    ]
    exported, notes = export_sillytavern(p.validate_prompts(data))
    injected = {x["identifier"]: x for x in exported["prompts"]}
    assert [(injected[i]["injection_position"], injected[i]["injection_depth"]) for i in "ab"] == [
        (1, 1),
        (1, 1),
    ]
    assert injected["a"]["injection_order"] < injected["b"]["injection_order"]
    assert len(notes) == 2


# --- files --------------------------------------------------------------------------------


def test_native_files_are_read_as_ours():
    prompts = p.dump_prompts(default_preset().prompts)
    read = read_preset_file(native_file("Mine", "desc", prompts))
    assert (read.name, read.description, read.prompts, read.report) == (
        "Mine",
        "desc",
        prompts,
        {"format": "native"},
    )
    # A preset body pasted as it is (no format key) is ours too.
    assert read_preset_file({"prompts": prompts}).report == {"format": "native"}
    # A SillyTavern file goes to the importer.
    assert read_preset_file(st_preset()).report["format"] == "sillytavern"


@pytest.mark.parametrize(
    "data",
    [
        {"format": "other", "prompts": []},
        {"format": "roleplay-preset", "format_version": 2, "prompts": []},
        {"format": "roleplay-preset", "prompts": [], "extra": 1},
        {"format": "roleplay-preset", "prompts": [], "name": 5},
        "text",
    ],
)
def test_bad_native_files(data):
    with pytest.raises(PresetFileInvalid):
        read_preset_file(data)


@pytest.mark.parametrize(
    "raw",
    [b"\xff\xfe", b"{", b'{"a": NaN}', b"[" * 100_000 + b"]" * 100_000, b'{"t": Infinity}'],
)
def test_bytes_that_are_not_json(raw):
    with pytest.raises(PresetFileInvalid):
        decode_json(raw)


def test_a_bom_is_allowed():
    assert decode_json(b'\xef\xbb\xbf{"prompts": []}') == {"prompts": []}
