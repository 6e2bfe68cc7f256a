"""Every real-world shape in ``tests/fixtures/sillytavern/realshapes`` goes through its REST
door and its console door and is accepted: no refusal of a valid file, no 500. Each fixture
reproduces, with our own short text, the keys, types and oddities of files taken from
SillyTavern's shipped content and from presets, cards, worldbooks, chats and regex scripts
players share (docs/realfiles.md lists where each shape was seen); what each keeps is
pinned in ``test_kept_fields``."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from roleplay.models import Character, Conversation, Preset
from tests.realfiles import doors
from worldbook.models import Book

pytestmark = pytest.mark.django_db

PRESETS = doors.shapes("preset_")
TEMPLATES = doors.shapes("instruct_") + doors.shapes("context_") + doors.shapes("master_")
BOOKS = doors.shapes("world_") + doors.shapes("lorebook_")
CARDS = doors.shapes("card_")
CHATS = doors.shapes("chat_")
SCRIPTS = doors.shapes("regex_")


def test_the_fixture_folder_has_every_kind():
    kinds = (PRESETS, TEMPLATES, BOOKS, CARDS, CHATS, SCRIPTS, doors.shapes("group_"))
    assert all(kinds) and sum(map(len, kinds)) >= 25


def accepted(response, status=201) -> dict:
    assert response.status_code == status, response.content[:1500]
    return response.json()


@pytest.mark.parametrize("name", PRESETS)
def test_presets(api, name):
    body = accepted(doors.preset(api, name, doors.shape(name)))
    assert body["preset"]["prompts"] and body["report"]["format"] == "sillytavern"


@pytest.mark.parametrize("name", TEMPLATES)
def test_instruct_and_context_templates(api, name):
    body = accepted(doors.template(api, name, doors.shape(name)))
    assert body["instruct"] or body["context"]


@pytest.mark.parametrize("name", BOOKS)
def test_worldbooks(api, name):
    book = accepted(doors.world(api, name, doors.shape(name)))["books"][0]
    stored = api.get(f"/v1/books/{book['book_id']}").json()["head"]["book"]
    assert stored["entries"] and all(e["keys"] or e["constant"] for e in stored["entries"])


@pytest.mark.parametrize("name", CARDS)
def test_cards(api, name):
    body = accepted(doors.card(api, name, doors.shape(name)))
    assert body["character"]["name"] and body["character"]["first_message"]


@pytest.mark.parametrize("name", CHATS)
def test_chats(api, name, player, character):
    body = accepted(doors.chat(api, name, doors.shape(name), player=player, character=character))
    tool = "text_generation_webui" if name.startswith("chat_webui") else "sillytavern"
    assert body["report"]["format"] == tool and body["report"]["stored_messages"] >= 3


@pytest.mark.parametrize("name", SCRIPTS)
def test_regex_scripts(api, name):
    body = accepted(doors.regex(api, name, doors.shape(name)))
    assert body["script"]["findRegex"] and body["script"]["placement"]


def test_group_chat(api, player, character, tenant):
    Character.objects.create(tenant=tenant, name="Jon", description="A sailor.")
    name, chat = "group_st_pooled_strings.json", "group_chat_st_current.jsonl"
    response = doors.group(
        api, name, doors.shape(name), chat_name=chat, chat_data=doors.shape(chat), player=player
    )
    body = accepted(response)
    assert [m["name"] for m in body["report"]["members"]] == ["Mira", "Jon"]


# --- the console doors: the same files, the same services -------------------------------


def _file(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, doors.shape(name))


@pytest.mark.parametrize("name", PRESETS)
def test_console_presets(operator_client, tenant, name):
    response = operator_client.post("/console/presets/import/", {"file": _file(name)})
    assert response.status_code == 302, response.content[:800]
    assert Preset.objects.filter(tenant=tenant).count() == 1


@pytest.mark.parametrize("name", CARDS)
def test_console_cards(operator_client, tenant, name):
    response = operator_client.post(
        "/console/characters/import/", {"file": _file(name), "on_duplicate": "existing"}
    )
    assert response.status_code == 302, response.content[:800]
    assert Character.objects.filter(tenant=tenant).count() == 1


@pytest.mark.parametrize("name", BOOKS)
def test_console_worldbooks(operator_client, tenant, staging_dir, name):
    response = operator_client.post("/console/worldbooks/import/", {"file": _file(name)})
    assert response.status_code == 302, response.content[:800]
    preview = operator_client.get(response["Location"])
    assert preview.status_code == 200
    confirmed = operator_client.post(response["Location"], {"action": "confirm"})
    assert confirmed.status_code == 302, confirmed.content[:800]
    assert Book.objects.filter(tenant=tenant).count() == 1


@pytest.mark.parametrize("name", CHATS)
def test_console_chats(operator_client, tenant, character, name):
    response = operator_client.post(
        "/console/conversations/import/", {"file": _file(name), "character": str(character.pk)}
    )
    assert response.status_code == 302, response.content[:800]
    assert Conversation.objects.filter(tenant=tenant).count() == 1
