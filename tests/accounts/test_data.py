"""A player's data: the export zip holds all of it; deleting the account leaves nothing."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.apps import apps
from django.test import Client

from console.models import AuditAction, AuditEvent, Player
from memory.entries.services import add_entry
from memory.models import MemoryEntry
from roleplay.accounts.models import DeviceSession, PlayerAccount
from roleplay.characters.services import characters
from roleplay.conversations.services import conversations
from roleplay.llm.scripted_server import Reply
from roleplay.models import Character, Conversation, Persona
from roleplay.players.services import personas
from tests.accounts.conftest import PASSWORD
from tests.api.test_no_orphans import rows_naming

pytestmark = pytest.mark.django_db(transaction=True)


def _player_with_everything(tenant, api, llm, sign_in, label: str):
    from roleplay.accounts import services

    account = services.create_account(tenant, email=f"{label}@example.com", password=PASSWORD)
    player = account.player
    persona = personas.create_persona(tenant, player=player, name=f"{label} persona")
    mine = characters.create_character(tenant, name=f"{label} own", first_message="Hi.")
    Character.objects.filter(pk=mine.pk).update(owner_player=player)
    operators = Character.objects.get(tenant=tenant, name="Mira")
    chats = []
    for character in (operators, mine):
        chat = conversations.start_conversation(tenant, player=player, character=character)
        llm.enqueue(Reply(content=f"{label} reply.", chunks=2))
        response = api.post(
            f"/api/v1/conversations/{chat.id}/turns/run",
            {"client_message_id": f"{label}-{character.pk}", "content": f"{label} says hi"},
            format="json",
        )
        assert response.status_code == 201, response.content
        chats.append(chat)
    entry = add_entry(tenant, player, kind="fact", scope="shared", content=f"{label} likes tea")
    client, response = sign_in(account.email)
    assert response.status_code == 302
    return account, client, {"persona": persona, "character": mine, "chats": chats, "entry": entry}


def _counts() -> dict[str, int]:
    return {
        model._meta.db_table: model.objects.count()
        for model in apps.get_models()
        if model._meta.managed and not model._meta.proxy
    }


@pytest.fixture
def world(app_tenant, api, llm, sign_in, model_config):
    Character.objects.create(tenant=app_tenant, name="Mira", first_message="Welcome.")
    target = _player_with_everything(app_tenant, api, llm, sign_in, "target")
    control = _player_with_everything(app_tenant, api, llm, sign_in, "control")
    return target, control


def test_the_export_holds_everything_of_the_players(world):
    (account, client, made), _ = world
    response = client.get("/app/account/export/")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = archive.namelist()
    assert json.loads(archive.read("account.json"))["email"] == "target@example.com"
    assert [p["name"] for p in json.loads(archive.read("personas.json"))] == ["target persona"]
    chats = [name for name in names if name.startswith("chats/") and name.endswith(".jsonl")]
    assert len(chats) == 2
    lines = [json.loads(line) for line in archive.read(chats[0]).decode().splitlines()]
    assert any(line.get("mes") == "target reply." for line in lines)
    entries = json.loads(archive.read("memory/entries.json"))
    assert [e["content"] for e in entries] == ["target likes tea"]
    assert any(name.startswith("characters/") for name in names)
    assert "control" not in archive.read(chats[0]).decode()
    assert AuditEvent.objects.filter(action=AuditAction.PLAYER_EXPORTED).count() == 1


def test_deleting_the_account_leaves_no_row_behind(world):
    (account, client, made), (control, _, control_made) = world
    before = _counts()
    gone = {
        Player: {account.player_id},
        PlayerAccount: {account.pk},
        Conversation: {chat.pk for chat in made["chats"]},
        Persona: {made["persona"].pk},
        Character: {made["character"].pk},
        MemoryEntry: {made["entry"].pk},
        DeviceSession: set(
            DeviceSession.objects.filter(account=account).values_list("pk", flat=True)
        ),
    }
    wrong = client.post("/app/account/delete/", {"password": "not-it"})
    assert wrong.status_code == 302 and _counts() == before
    response = client.post("/app/account/delete/", {"password": PASSWORD})
    assert response.status_code == 200 and 'id="account-deleted"' in response.content.decode()
    after = _counts()
    changed = {table for table in before if before[table] != after[table]}
    assert all(after[table] < before[table] for table in changed if table != "console_auditevent")
    left = rows_naming(gone)
    left.pop("console_auditevent", None)  # the deletion's own record (an id, no e-mail)
    assert left == {}
    assert not AuditEvent.objects.filter(details__icontains="target@example.com").exists()
    # The other player keeps everything.
    assert PlayerAccount.objects.filter(pk=control.pk).exists()
    assert Conversation.objects.filter(player=control.player).count() == 2
    assert MemoryEntry.objects.filter(player=control.player).count() == 1
    assert Client().get("/app/").status_code == 302
    assert client.get("/app/")["Location"].startswith("/app/login/")
