"""A card's regex scripts end to end: imported with the card (one that cannot run reported
on import), off until allowed, then a turn against the scripted model server where the
prompt-only script changes the prompt's history but not the stored messages, the AI-output
script changes the stored reply and the display-only script changes only what is shown."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from console.models import Player
from memory import services as message_store
from memory.models import Message
from roleplay.models import Character, Conversation
from roleplay.regex_scripts.models import RegexScript
from tests.characters.cardfiles import as_json, v2_card

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPTS = [
    {"id": "1", "scriptName": "shout on screen", "findRegex": "/keeper/g",
     "replaceString": "KEEPER", "placement": [2], "markdownOnly": True},
    {"id": "2", "scriptName": "hide the secret", "findRegex": "/secret/gi",
     "replaceString": "[hidden]", "placement": [1, 2], "promptOnly": True},
    {"id": "3", "scriptName": "greet", "findRegex": "/^Hello (\\w+)/",
     "replaceString": "Greetings $1, {{user}}", "placement": [2]},
    {"id": "4", "scriptName": "tidy input", "findRegex": "/\\s+!/g", "replaceString": "!",
     "placement": [1]},
    {"id": "5", "scriptName": "malformed", "findRegex": "/(?<=a b/", "replaceString": "",
     "placement": [2]},
]  # fmt: skip


def _import(api) -> dict:
    card = v2_card("Mira", extensions={"regex_scripts": SCRIPTS})
    upload = SimpleUploadedFile("mira.json", as_json(card), content_type="application/json")
    response = api.post("/api/v1/characters/import", {"file": upload}, format="multipart")
    assert response.status_code == 201, response.content[:1000]
    return response.json()


def test_a_script_that_cannot_run_is_reported_on_import(api, tenant):
    body = _import(api)
    report = body["report"]
    assert report["regex_scripts"]["imported"] == 4
    assert report["regex_scripts"]["allowed"] is False
    [refused] = report["regex_scripts"]["refused"]
    assert (refused["index"], refused["script"], refused["code"]) == (
        4, "malformed", "regex_script_unsupported",
    )  # fmt: skip
    warnings = [w for w in report["warnings"] if w["code"] == "regex_script_refused"]
    assert len(warnings) == 1 and "malformed" in warnings[0]["message"]
    character = Character.objects.get(pk=body["character"]["id"])
    assert not character.allow_regex
    assert "regex_scripts" not in character.extensions  # they are the character's scripts now
    names = [r.name for r in RegexScript.objects.filter(character=character).order_by("position")]
    assert names == ["shout on screen", "hide the secret", "greet", "tidy input"]


def _conversation(tenant, character, model_config) -> Conversation:
    player = Player.objects.create(tenant=tenant, external_id="p-1", display_name="Ann")
    conversation = Conversation.objects.create(
        tenant=tenant, player=player, character=character, model_config=model_config
    )
    for role, text in (("user", "Where is the secret room?"), ("assistant", "The keeper knows.")):
        message_store.save_message(tenant, conversation.session_id, role=role, content=text)
    return conversation


def _turn(api, conversation, text: str, key: str) -> dict:
    response = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": key, "content": text},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def _stored(conversation) -> list[str]:
    rows = Message.objects.filter(session_id=conversation.session_id).order_by("ts")
    return [m.content for m in rows]


def test_scripts_do_nothing_until_the_character_is_allowed(api, tenant, llm, model_config):
    character = Character.objects.get(pk=_import(api)["character"]["id"])
    conversation = _conversation(tenant, character, model_config)
    body = _turn(api, conversation, "Tell me the secret !", "c-1")
    assert body["reply"]["content"] == "Hello from the scripted model."
    sent = "\n".join(m["content"] for m in llm.requests[-1]["messages"])
    assert "secret" in sent and "[hidden]" not in sent
    assert _stored(conversation)[-2] == "Tell me the secret !"


def test_allowed_scripts_run_at_their_points(api, tenant, llm, model_config):
    character = Character.objects.get(pk=_import(api)["character"]["id"])
    allowed = api.put(f"/api/v1/characters/{character.pk}/regex-allow", {"allow": True},
                      format="json")  # fmt: skip
    assert allowed.status_code == 200, allowed.content
    assert allowed.json()["allow"] is True and allowed.json()["scripts"] == 4
    conversation = _conversation(tenant, character, model_config)

    body = _turn(api, conversation, "Tell me the secret !", "c-1")

    # AI output (placement 2): the stored reply, and what the turn answers, carry the result
    assert body["reply"]["content"] == "Greetings from, Ann the scripted model."
    # prompt-only: the prompt's history and input were changed ...
    sent = [m["content"] for m in llm.requests[-1]["messages"]]
    joined = "\n".join(sent)
    assert "Where is the [hidden] room?" in joined
    assert "Tell me the [hidden]!" in joined
    assert "secret" not in joined
    # ... but never what is stored; the input script (placement 1) changed the stored input
    assert _stored(conversation) == [
        "Where is the secret room?",
        "The keeper knows.",
        "Tell me the secret!",
        "Greetings from, Ann the scripted model.",
    ]
    # display-only: the message API's display changes, its content does not
    listed = api.get(f"/api/v1/conversations/{conversation.pk}/messages").json()["results"]
    keeper = next(m for m in listed if m["role"] == "assistant" and "keeper" in m["content"])
    assert keeper["content"] == "The keeper knows."
    assert keeper["display"] == "The KEEPER knows."
    user = next(m for m in listed if m["content"] == "Where is the secret room?")
    assert user["display"] == user["content"]
    assert "KEEPER" not in joined  # display-only never reaches the prompt


def test_the_chat_page_shows_the_display_text_and_keeps_the_source(
    client, tenant, operator_user, api, llm, model_config
):
    character = Character.objects.get(pk=_import(api)["character"]["id"])
    api.put(f"/api/v1/characters/{character.pk}/regex-allow", {"allow": True}, format="json")
    conversation = _conversation(tenant, character, model_config)
    client.force_login(operator_user)
    page = client.get(f"/play/{conversation.pk}/?part=transcript")
    assert page.status_code == 200, page.status_code
    html = page.content.decode()
    assert 'data-display="The KEEPER knows."' in html
    assert '<div class="text">The keeper knows.</div>' in html


def test_run_on_edit_scripts_apply_to_an_edit(api, tenant, llm, model_config):
    character = Character.objects.get(pk=_import(api)["character"]["id"])
    api.put(f"/api/v1/characters/{character.pk}/regex-allow", {"allow": True}, format="json")
    api.post(
        "/api/v1/regex-scripts/",
        {"scope": "character", "character": str(character.pk),
         "script": {"scriptName": "on edit", "findRegex": "/darn/g", "replaceString": "d*rn",
                    "placement": [1, 2], "runOnEdit": True}},
        format="json",
    )  # fmt: skip
    conversation = _conversation(tenant, character, model_config)
    message = Message.objects.filter(session_id=conversation.session_id, role="user").first()
    response = api.patch(
        f"/api/v1/conversations/{conversation.pk}/messages/{message.pk}",
        {"content": "darn it !"},
        format="json",
    )
    assert response.status_code == 200, response.content
    # runOnEdit script ran; "tidy input" (not runOnEdit) did not
    assert response.json()["content"] == "d*rn it !"


def test_a_card_export_gives_the_scripts_back(api, tenant):
    import json

    character_id = _import(api)["character"]["id"]
    exported = api.get(f"/api/v1/characters/{character_id}/export", {"format": "ccv2_json"})
    assert exported.status_code == 200, exported.content[:500]
    card = json.loads(b"".join(exported.streaming_content) if exported.streaming else
                      exported.content)  # fmt: skip
    scripts = card["data"]["extensions"]["regex_scripts"]
    assert [s["scriptName"] for s in scripts] == [
        "shout on screen", "hide the secret", "greet", "tidy input",
    ]  # fmt: skip
    assert scripts[1]["promptOnly"] is True and scripts[1]["placement"] == [1, 2]
