"""What the real-world shapes keep through their doors, pinned field by field, for each
defect they revealed (refusals of valid files, fields that landed in the wrong place or were
dropped although we have a place for them)."""

from __future__ import annotations

import json

import pytest

from memory.models import Message, MessageAlternative
from roleplay.models import Conversation
from roleplay.prompting.sillytavern_legacy import upgrade
from roleplay.regex_scripts.engine import compile_script, run_script
from roleplay.regex_scripts.models import RegexScript, ScriptScope
from tests.realfiles import doors

pytestmark = pytest.mark.django_db


def _prompts(body: dict) -> dict[str, dict]:
    return {p["identifier"]: p for p in body["preset"]["prompts"]}


def _entries(api, name: str, data: bytes | None = None) -> tuple[dict, list[dict]]:
    response = doors.world(api, name, data if data is not None else doors.shape(name))
    assert response.status_code == 201, response.content[:800]
    book = response.json()["books"][0]
    stored = api.get(f"/v1/books/{book['book_id']}").json()["head"]["book"]
    return book["import_report"], stored["entries"]


# --- presets ------------------------------------------------------------------------------


def test_a_preset_from_before_the_prompt_manager_fills_the_default_prompts(api):
    body = doors.preset(api, "old.json", doors.shape("preset_legacy_main_prompt_fields.json"))
    assert body.status_code == 201, body.content[:800]
    prompts = _prompts(body.json())
    assert prompts["main"]["content"].startswith("Write {{char}}'s next reply")
    assert (prompts["auxiliary"]["content"], prompts["auxiliary"]["enabled"]) == (
        "Mature themes are allowed.", True
    )  # fmt: skip
    jailbreak = prompts["postHistoryInstructions"]
    assert (jailbreak["content"], jailbreak["enabled"]) == ("[Reply as {{char}} only.]", True)
    assert prompts["enhanceDefinitions"]["enabled"] is False  # enhance_definitions: false
    order = [p["identifier"] for p in body.json()["preset"]["prompts"]]
    assert order.index("main") < order.index("auxiliary") < order.index("chatHistory")
    report = body.json()["report"]
    assert any("before the prompt manager" in c["reason"] for c in report["changed"])
    assert {"main_prompt", "nsfw_toggle"}.isdisjoint(report["ignored_settings"])
    assert {"setting": "temperature", "value": 0.9, "model_config_field": "temperature"} in (
        report["model_config_settings"]
    )


def test_the_legacy_toggles_keep_their_meaning():
    data = {"main_prompt": "M", "nsfw_prompt": "N", "jailbreak_prompt": "",
            "nsfw_toggle": False, "nsfw_first": True, "enhance_definitions": True}  # fmt: skip
    order = upgrade(data)["prompt_order"][0]["order"]
    assert order[:2] == [{"identifier": "nsfw", "enabled": False},
                         {"identifier": "main", "enabled": True}]  # fmt: skip
    enabled = {o["identifier"]: o["enabled"] for o in order}
    assert enabled["enhanceDefinitions"] is True and enabled["jailbreak"] is False


def test_a_preset_s_spreset_regex_binding_becomes_its_regex_scripts(api):
    name = "preset_zh_spreset_regex_binding.json"
    response = doors.preset(api, name, doors.shape(name))
    assert response.status_code == 201, response.content[:800]
    assert response.json()["report"]["regex_scripts"] == {"imported": 3, "refused": []}
    scripts = RegexScript.objects.filter(scope=ScriptScope.PRESET).order_by("position")
    assert [s.script["scriptName"] for s in scripts] == [
        "总结隐藏", "总结+屏蔽(最小深度20)", "选项隐藏+屏蔽",
    ]  # fmt: skip
    assert scripts[1].script["minDepth"] == 20 and scripts[2].script["placement"] == [1, 2]


def test_a_script_in_both_places_is_imported_once(api):
    data = json.loads(doors.shape("preset_zh_spreset_regex_binding.json"))
    bound = data["extensions"]["SPreset"]["RegexBinding"]["regexes"]
    data["extensions"]["regex_scripts"] = [bound[0]]
    response = doors.preset(api, "both.json", json.dumps(data).encode())
    assert response.json()["report"]["regex_scripts"] == {"imported": 3, "refused": []}


def test_depth_injections_and_their_order_survive(api):
    name = "preset_uuid_prompts_depth_injection.json"
    prompts = _prompts(doors.preset(api, name, doors.shape(name)).json())
    last = prompts["9eeaed81-d58f-4c8e-8a73-193cd1df5046"]
    assert last["injection"] == {"position": "at_depth", "depth": 0, "order": 99}
    assert last["enabled"] is True  # the order's switch wins over the prompt's own
    assert prompts["postHistoryInstructions"]["role"] == "assistant"


# --- worldbooks ---------------------------------------------------------------------------


def test_card_position_names_in_a_world_file_keep_their_side(api):
    report, entries = _entries(api, "world_entries_as_list_legacy.json")
    assert [e["position"] for e in entries] == ["before_character", "after_character"]
    assert report["lossy_mappings"] == []


def test_a_bare_character_book_keeps_its_keys(api):
    report, entries = _entries(api, "lorebook_chub_bare_character_book.json")
    assert report["format"] == "ccv2"
    assert [(e["keys"], e["secondary_keys"]) for e in entries] == [
        (["harbor"], []), (["ferry", "boat"], ["winter"]),
    ]  # fmt: skip
    assert [(e["order"], e["position"]) for e in entries] == [
        (100, "after_character"), (90, "before_character"),
    ]  # fmt: skip


def test_odd_types_read_as_sillytavern_reads_them(api):
    _report, entries = _entries(api, "world_odd_types_strings_numbers.json")
    gate, tower = entries
    assert gate["keys"] == ["gate", "北门", "the old gate"]
    assert (gate["position"], gate["order"], gate["depth"]) == ("after_character", 100, 4)
    assert (tower["position"], tower["depth"]) == ("at_depth", 4)


def test_a_position_of_the_wrong_type_is_reported_not_a_500(api):
    data = json.loads(doors.shape("world_odd_types_strings_numbers.json"))
    data["entries"]["5"]["position"] = ["after_char"]
    report, entries = _entries(api, "odd.json", json.dumps(data).encode())
    assert entries[0]["position"] == "before_character"
    lossy = {"entry_id": "5", "field": "position", "value": ["after_char"],
             "reason": "unknown value; used before_character"}  # fmt: skip
    assert lossy in report["lossy_mappings"]


# --- cards --------------------------------------------------------------------------------


def test_a_text_of_tags_is_split_at_commas_and_a_text_depth_is_read(api):
    body = doors.card(api, "odd.json", doors.shape("card_v2_odd_types_nulls.json")).json()
    assert body["character"]["tags"] == ["tavern", "odd", "test"]
    assert body["character"]["author_note"]["depth"] == 2
    assert body["character"]["alternate_greetings"] == []


def test_a_chub_card_keeps_its_depth_prompt_and_extensions(api):
    body = doors.card(api, "n.json", doors.shape("card_v2_chub_depth_prompt_null_book.json"))
    character = body.json()["character"]
    assert character["author_note"]["depth"] == 0 and body.json()["books"] == []
    assert character["extensions"]["chub"]["full_path"] == "someone_123/nell-harper"


def test_an_st_export_brings_its_book_and_regex_scripts(api):
    body = doors.card(api, "m.json", doors.shape("card_v2_st_export_v1_mirror.json")).json()
    assert [b["name"] for b in body["books"]] == ["Lighthouse lore"]
    scripts = RegexScript.objects.filter(scope=ScriptScope.CHARACTER)
    assert [s.script["scriptName"] for s in scripts] == ["Strip OOC"]


def test_a_v3_card_keeps_what_has_no_column(api):
    name = "card_v3_assets_group_greetings_multilingual.json"
    card = doors.card(api, name, doors.shape(name)).json()["character"]
    kept = card["extensions"]["roleplay_card"]
    assert kept["group_only_greetings"] == ["Everyone, gather round the map."]
    assert kept["nickname"] == "Ash" and len(kept["assets"]) == 3


# --- chats --------------------------------------------------------------------------------


def test_a_current_chat_keeps_swipes_and_reasoning(api, player, character):
    name = "chat_st_current_reasoning_swipe_info.jsonl"
    body = doors.chat(api, name, doors.shape(name), player=player, character=character).json()
    assert body["report"]["skipped"] == {"empty": 1, "hidden": 1}
    conversation = Conversation.objects.get(pk=body["conversation"]["id"])
    texts = list(
        Message.objects.filter(session_id=conversation.session_id)
        .order_by("ts")
        .values_list("content", "reasoning")
    )
    assert ("It is. Hold the rail on the stairs.", "She worries about the stairs.") in texts


def _alternatives(conversation_id) -> list[tuple[str, str]]:
    session = Conversation.objects.get(pk=conversation_id).session_id
    rows = MessageAlternative.objects.filter(message__session_id=session)
    return list(rows.order_by("message__ts", "index").values_list("content", "reasoning"))


def test_each_swipe_keeps_its_own_reasoning_through_import_and_export(api, player, character):
    name = "chat_st_current_reasoning_swipe_info.jsonl"
    body = doors.chat(api, name, doors.shape(name), player=player, character=character).json()
    kept = [
        ("A ship, long gone.", "It looks like a ship."),
        ("It's the old keeper's.", "The photo shows the old keeper."),
    ]
    assert _alternatives(body["conversation"]["id"])[-2:] == kept
    exported = api.get(f"/api/v1/conversations/{body['conversation']['id']}/export")
    assert exported.status_code == 200
    last = json.loads(exported.content.decode().splitlines()[-1])
    assert [i["extra"].get("reasoning") for i in last["swipe_info"]] == [r for _, r in kept]
    again = doors.chat(api, "again.jsonl", exported.content, player=player, character=character)
    assert _alternatives(again.json()["conversation"]["id"])[-2:] == kept


def test_a_null_message_is_an_empty_one(api, player, character):
    lines = doors.shape("chat_st_2023_header_old_create_date.jsonl").decode().splitlines()
    item = json.loads(lines[2])
    lines.insert(3, json.dumps({**item, "mes": None}))
    data = "\n".join(lines).encode()
    response = doors.chat(api, "null.jsonl", data, player=player, character=character)
    assert response.status_code == 201, response.content[:800]
    assert response.json()["report"]["skipped"] == {"empty": 1}


def test_content_parts_without_text_are_not_a_500(api, player, character):
    chat = [
        {"role": "user", "content": [{"type": "text", "text": None}, {"text": "Hi"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "1", "type": "function"}]},
        {"role": "tool", "content": "{}", "tool_call_id": "1"},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}, "stray"]},
    ]  # fmt: skip
    data = json.dumps(chat).encode()
    response = doors.chat(api, "openai.json", data, player=player, character=character)
    assert response.status_code == 201, response.content[:800]
    assert response.json()["report"]["skipped"] == {"empty": 1, "system": 1}


@pytest.mark.parametrize(
    "name", ["chat_webui_internal_visible.json", "chat_webui_old_data_visible.json"]
)
def test_a_text_generation_webui_log_reads_its_visible_pairs(api, player, character, name):
    body = doors.chat(api, name, doors.shape(name), player=player, character=character).json()
    assert body["report"]["format"] == "text_generation_webui"
    session = Conversation.objects.get(pk=body["conversation"]["id"]).session_id
    rows = list(
        Message.objects.filter(session_id=session).order_by("ts").values_list("role", "content")
    )
    assert [role for role, _ in rows] == ["assistant", "user", "assistant", "user", "assistant"]
    assert all("&#x27;" not in text and "&amp;" not in text for _, text in rows)
    assert "<|BEGIN-VISIBLE-CHAT|>" not in "".join(text for _, text in rows)


# --- regex files --------------------------------------------------------------------------


def test_a_bulk_regex_file_adds_its_scripts_after_the_owner_s_look_around_included(api):
    single = doors.regex(api, "one.json", doors.shape("regex_st_single_export_html.json"))
    assert single.status_code == 201
    name = "regexlist_bulk_export_lookaround.json"
    response = doors.regex_file(api, name, doors.shape(name))
    assert response.status_code == 201, response.content[:800]
    body = response.json()
    assert len(body["imported"]) == 4 and body["replayed"] is False and body["refused"] == []
    rows = RegexScript.objects.filter(scope=ScriptScope.GLOBAL).order_by("position")
    assert [(r.position, r.script["scriptName"]) for r in rows][1:] == [
        (2, "隐藏|换行A"), (3, "屏蔽|思维链"), (4, "隐藏|换行B"), (5, "压缩|摘要(最小深度20)"),
    ]  # fmt: skip
    # The look-ahead and look-behind run as SillyTavern runs them (the backtracking engine).
    after, before = (compile_script(rows[n].script) for n in (1, 3))
    assert run_script(after, "<content>\n\n  \nHello") == "<content>Hello"
    assert run_script(after, "<content>\n```code") == "<content>\n```code"
    assert run_script(before, "Bye\n\n</content>") == "Bye</content>"
    assert run_script(before, "```\n</content>") == "```\n</content>"


def test_a_regex_file_goes_to_a_preset_or_a_character(api, character):
    data = doors.shape("regex_st_old_bool_substitute_no_id.json")
    response = doors.regex_file(api, "c.json", data, scope="character", character=str(character.pk))
    assert response.status_code == 201, response.content[:800]
    assert RegexScript.objects.get(pk=response.json()["imported"][0]).character_id == character.pk
    wrong = doors.regex_file(api, "c.json", data, scope="preset", character=str(character.pk))
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == "validation_error"


def test_a_regex_file_with_nothing_that_runs_writes_nothing(api):
    data = json.loads(doors.shape("regexlist_bulk_export_lookaround.json"))
    broken = [dict(data[0], findRegex="/(?<!```/g"), dict(data[2], findRegex="/[a-/")]
    response = doors.regex_file(api, "bad.json", json.dumps(broken).encode())
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "regex_script_unsupported"
    empty = doors.regex_file(api, "empty.json", b"[]")
    assert empty.status_code == 422 and empty.json()["error"]["code"] == "regex_script_invalid"
    assert not RegexScript.objects.exists()


def test_the_owner_s_limit_refuses_the_rest(api, monkeypatch):
    from roleplay.regex_scripts import services

    monkeypatch.setattr(services, "MAX_SCRIPTS_PER_OWNER", 2)
    data = json.loads(doors.shape("regexlist_bulk_export_lookaround.json"))
    script = data[1]
    many = [dict(script, scriptName=f"s{i}") for i in range(4)]
    response = doors.regex_file(api, "many.json", json.dumps(many).encode())
    body = response.json()
    assert len(body["imported"]) == 2
    assert [(r["index"], r["code"]) for r in body["refused"]] == [
        (2, "regex_script_limit"), (3, "regex_script_limit"),
    ]  # fmt: skip
