"""Regex scripts over REST: bad input is a coded 4xx (never a 500, never a write); global and
preset scripts run without allowing; a SillyTavern preset's scripts come with its import;
world-info scripts change the selected lore the prompt carries."""

from __future__ import annotations

import json

import pytest

from console.models import Player
from memory.models import Message
from roleplay.models import Character, Conversation
from roleplay.presets.services import create_preset
from roleplay.regex_scripts.models import RegexScript
from tests.api.helpers import assert_error
from tests.presets.st_fixture import st_preset
from worldbook import services as worldbooks
from worldbook.engine.schema import BookIn

URL = "/api/v1/regex-scripts/"


def script(**extra):
    return {"scriptName": "s", "findRegex": "/a/g", "replaceString": "b", "placement": [2],
            **extra}  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"scope": "global", "script": script(findRegex="/a/gx")}, 422,
         "regex_script_unsupported"),
        ({"scope": "global", "script": script(findRegex="/(?=a b/")}, 422,
         "regex_script_unsupported"),
        ({"scope": "global", "script": script(findRegex="/[a-/")}, 422,
         "regex_script_unsupported"),
        ({"scope": "global", "script": script(placement=[9])}, 422, "regex_script_invalid"),
        ({"scope": "global", "script": script(substituteRegex=7)}, 422, "regex_script_invalid"),
        ({"scope": "global", "script": script(minDepth=-5)}, 422, "regex_script_invalid"),
        ({"scope": "global", "script": script(trimStrings="x")}, 422, "regex_script_invalid"),
        ({"scope": "global", "script": script(findRegex="")}, 422, "regex_script_invalid"),
        ({"scope": "global", "script": script(scriptName=["x"])}, 422, "regex_script_invalid"),
        ({"scope": "character", "script": script()}, 400, "validation_error"),
        ({"scope": "preset", "script": script()}, 400, "validation_error"),
        ({"scope": "elsewhere", "script": script()}, 400, "validation_error"),
        ({"scope": "global", "script": "s/a/b/"}, 400, "validation_error"),
        ({"scope": "global", "script": script(), "extra": 1}, 400, "validation_error"),
        ({"scope": "global", "character": "not-an-id", "script": script()}, 400,
         "validation_error"),
    ],
)  # fmt: skip
def test_bad_scripts_are_coded_4xx_and_write_nothing(api, body, status, code):
    response = api.post(URL, body, format="json")
    assert_error(response, status, code)
    assert not RegexScript.objects.exists()


@pytest.mark.django_db
def test_crud_and_the_owner_stays(api, tenant, character):
    owner = {"scope": "character", "character": str(character.pk)}
    created = api.post(URL, {**owner, "script": script(minDepth="", maxDepth=-1)}, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["script"]["minDepth"] is None and body["script"]["maxDepth"] is None
    assert body["position"] == 1
    listed = api.get(URL, {"scope": "character", "character": str(character.pk)}).json()
    assert [row["id"] for row in listed["results"]] == [body["id"]]
    assert api.get(URL, {"scope": "global"}).json()["results"] == []
    assert_error(api.get(URL, {"scope": "nowhere"}), 400, "validation_error")
    moved = api.patch(f"{URL}{body['id']}", {"scope": "global"}, format="json")
    assert_error(moved, 400, "validation_error")
    bad = api.patch(f"{URL}{body['id']}", {"script": script(findRegex="/(?!a/")}, format="json")
    assert_error(bad, 422, "regex_script_unsupported")
    renamed = api.patch(f"{URL}{body['id']}", {"script": script(scriptName="t")}, format="json")
    assert renamed.status_code == 200 and renamed.json()["script"]["scriptName"] == "t"
    assert api.delete(f"{URL}{body['id']}").status_code == 204
    assert not RegexScript.objects.exists()


@pytest.mark.django_db
def test_allow_toggle_and_its_bad_input(api, api_client_for, other_tenant, character):
    other_api = api_client_for(other_tenant)
    url = f"/api/v1/characters/{character.pk}/regex-allow"
    assert api.get(url).json() == {"character": str(character.pk), "allow": False, "scripts": 0}
    assert_error(api.put(url, {"allow": "perhaps"}, format="json"), 400, "validation_error")
    assert_error(api.put(url, {}, format="json"), 400, "validation_error")
    assert_error(other_api.put(url, {"allow": True}, format="json"), 404, "not_found")
    assert_error(api.put("/api/v1/characters/nope/regex-allow", {"allow": True},
                         format="json"), 404, "not_found")  # fmt: skip
    assert api.put(url, {"allow": True}, format="json").json()["allow"] is True
    character.refresh_from_db()
    assert character.allow_regex


@pytest.mark.django_db
def test_a_foreign_owner_is_refused(api, other_tenant, character):
    foreign = Character.objects.create(tenant=other_tenant, name="Elsewhere")
    body = {"scope": "character", "character": str(foreign.pk), "script": script()}
    assert_error(api.post(URL, body, format="json"), 400, "validation_error")


@pytest.mark.django_db
def test_a_sillytavern_presets_scripts_come_with_its_import(api_client_for, tenant):
    content = api_client_for(tenant, scopes=["content"])
    preset = st_preset()
    bad = script(scriptName="bad", findRegex="/(?<=x/")
    preset["extensions"] = {"regex_scripts": [script(scriptName="ok"), bad]}
    response = content.post("/api/v1/presets/import", {"name": "ST", "preset": preset},
                            format="json")  # fmt: skip
    assert response.status_code == 201, response.content
    report = response.json()["report"]["regex_scripts"]
    assert report["imported"] == 1
    assert [(p["script"], p["code"]) for p in report["refused"]] == [
        ("bad", "regex_script_unsupported")
    ]
    rows = RegexScript.objects.filter(scope="preset", preset_id=response.json()["preset"]["id"])
    assert [r.name for r in rows] == ["ok"]


def _conversation(tenant, character, model_config) -> Conversation:
    player = Player.objects.create(tenant=tenant, external_id="p-1", display_name="Ann")
    return Conversation.objects.create(
        tenant=tenant, player=player, character=character, model_config=model_config
    )


def _run(api, conversation, text: str) -> dict:
    response = api.post(f"/api/v1/conversations/{conversation.pk}/turns/run",
                        {"client_message_id": "c-1", "content": text}, format="json")  # fmt: skip
    assert response.status_code == 201, response.content
    return response.json()


@pytest.mark.django_db(transaction=True)
def test_global_and_preset_scripts_run_without_allowing(api, tenant, llm, model_config, character):
    preset = create_preset(tenant, name="With scripts")
    model_config.preset = preset
    model_config.save(update_fields=["preset"])
    api.post(URL, {"scope": "global", "script": script(findRegex="/scripted/", replaceString="G",
                                                       placement=[2])}, format="json")  # fmt: skip
    by_preset = script(findRegex="/model/", replaceString="P")
    api.post(URL, {"scope": "preset", "preset": str(preset.pk), "script": by_preset},
             format="json")  # fmt: skip
    by_character = script(findRegex="/Hello/", replaceString="C")
    api.post(URL, {"scope": "character", "character": str(character.pk), "script": by_character},
             format="json")  # fmt: skip
    assert not character.allow_regex
    body = _run(api, _conversation(tenant, character, model_config), "Hi.")
    assert body["reply"]["content"] == "Hello from the G P."  # the character's did not run


@pytest.mark.django_db(transaction=True)
def test_world_info_scripts_change_the_selected_lore(api, tenant, llm, model_config, character):
    book, _ = worldbooks.create_book(tenant, BookIn.model_validate(
        {"name": "Lore", "entries": [{"id": "gate", "content": "The secret gate opens at dawn.",
                                      "constant": True}]}))  # fmt: skip
    worldbooks.put_bindings(tenant, str(character.pk), [{"book_id": str(book.id)}])
    api.post(URL, {"scope": "global", "script": script(findRegex="/secret/", replaceString="hidden",
                                                       placement=[5])}, format="json")  # fmt: skip
    conversation = _conversation(tenant, character, model_config)
    _run(api, conversation, "Tell me about the secret.")
    sent = "\n".join(m["content"] for m in llm.requests[-1]["messages"])
    assert "The hidden gate opens at dawn." in sent
    assert "The secret gate" not in sent
    # placement 5 only: the player's message is stored as sent
    assert Message.objects.filter(session_id=conversation.session_id, role="user").get().content \
        == "Tell me about the secret."  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["native", "sillytavern"])
def test_a_presets_scripts_leave_with_its_export_and_come_back_with_its_import(
    api_client_for, tenant, fmt
):
    content = api_client_for(tenant, scopes=["content"])
    preset = st_preset()
    preset["extensions"] = {"regex_scripts": [script(scriptName="first"), script(scriptName="b")]}
    created = content.post("/api/v1/presets/import", {"name": "ST", "preset": preset},
                           format="json")  # fmt: skip
    assert created.status_code == 201, created.content
    exported = content.get(f"/api/v1/presets/{created.json()['preset']['id']}/export?format={fmt}")
    assert exported.status_code == 200, exported.content
    data = json.loads(exported.content)
    names = [s["scriptName"] for s in data["extensions"]["regex_scripts"]]
    assert names == ["first", "b"]
    again = content.post("/api/v1/presets/import", {"name": "Again", "preset": data},
                         format="json")  # fmt: skip
    assert again.status_code == 201, again.content
    assert again.json()["report"]["regex_scripts"]["imported"] == 2
    rows = RegexScript.objects.filter(scope="preset", preset_id=again.json()["preset"]["id"])
    assert [r.name for r in rows.order_by("position")] == ["first", "b"]
