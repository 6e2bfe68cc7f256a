"""``POST /api/v1/conversations/import`` end to end: a chat file becomes a conversation whose
history the next turn reads; a refused file writes nothing; another tenant's objects are not
reachable."""

from __future__ import annotations

import json
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memory.models import Message, MessageAlternative
from roleplay.characters.selectors import greeting_for
from roleplay.models import Conversation
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/v1/conversations/import"


def jsonl(*items) -> bytes:
    return "\n".join(json.dumps(item) for item in items).encode()


CHAT = jsonl(
    {"user_name": "Ann", "character_name": "Mira", "create_date": "2024-01-01@12h00m00s"},
    {"name": "Mira", "is_user": False, "mes": "Welcome.", "swipes": ["Welcome.", "Hi, Ann."],
     "swipe_id": 0, "send_date": "January 1, 2024 12:00pm"},
    {"name": "Ann", "is_user": True, "mes": "Is the lamp lit?",
     "send_date": "January 1, 2024 12:01pm"},
    {"name": "Mira", "is_user": False, "mes": "It is now.", "swipes": ["Not yet.", "It is now."],
     "swipe_id": 1, "send_date": "January 1, 2024 12:02pm"},
    {"name": "Ann", "is_user": True, "mes": "(ooc: hidden)", "is_system": True},
    {"name": "Ann", "is_user": True, "mes": "Then let us climb.",
     "send_date": "January 1, 2024 12:03pm"},
)  # fmt: skip


def send(client, data: bytes, name="Mira - 2024-01-01.jsonl", key=None, **fields):
    upload = SimpleUploadedFile(name, data, content_type="application/octet-stream")
    extra = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post(URL, {"file": upload, **fields}, format="multipart", **extra)


def test_a_sillytavern_chat_becomes_a_conversation(
    api, tenant, player, character, model_config, llm
):
    response = send(api, CHAT, player=str(player.pk), character=str(character.pk))
    assert response.status_code == 201, response.content[:800]
    body = response.json()
    conversation = Conversation.objects.get(pk=body["conversation"]["id"])
    assert conversation.title == "Mira - 2024-01-01"
    assert (conversation.player_id, conversation.character_id) == (player.pk, character.pk)
    report = body["report"]
    assert report["opening"] == "greeting" and report["greeting_index"] == 0
    assert report["stored_messages"] == 3 and report["skipped"] == {"hidden": 1}
    rows = list(Message.objects.filter(session_id=conversation.session_id).order_by("ts"))
    assert [(m.role, m.content) for m in rows] == [
        ("user", "Is the lamp lit?"),
        ("assistant", "It is now."),
        ("user", "Then let us climb."),
    ]
    assert [m.ts for m in rows] == [1704110460000, 1704110520000, 1704110580000]
    assert rows[1].selected_alternative == 1
    assert list(
        MessageAlternative.objects.filter(message=rows[1]).values_list("index", "content")
    ) == [(0, "Not yet."), (1, "It is now.")]
    # the next turn reads the imported history after the opening
    turn = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": "t1", "content": "Up we go."},
        format="json",
    )
    assert turn.status_code == 201, turn.content[:500]
    texts = [m["content"] for m in llm.requests[-1]["messages"]]
    start = texts.index("Welcome.")
    assert texts[start + 1 :] == [
        "Is the lamp lit?", "It is now.", "Then let us climb.", "Up we go.",
    ]  # fmt: skip
    # the same upload again with the same Idempotency-Key replays the answer
    ids = {"player": str(player.pk), "character": str(character.pk)}
    again, replay = (send(api, CHAT, "a.jsonl", "k1", **ids) for _ in "ab")
    assert again.status_code == 201 and replay.json()["replayed"] is True
    assert replay.json()["conversation"]["id"] == again.json()["conversation"]["id"]


def test_an_opening_that_is_not_the_character_s_is_kept(api, player, character):
    chat = jsonl(
        {"name": "Mira", "is_user": False, "mes": "A different opening."},
        {"name": "Ann", "is_user": True, "mes": "Hi"},
    )
    body = send(api, chat, player=str(player.pk), character=str(character.pk)).json()
    assert body["report"]["opening"] == "stored" and body["report"]["stored_messages"] == 2
    # no opening of the character's before the file's own: the history starts as it does
    assert body["conversation"]["greeting_index"] is None
    assert body["conversation"]["greeting"] == ""
    conversation_id = body["conversation"]["id"]
    exported = api.get(f"/api/v1/conversations/{conversation_id}/export?format=openai").json()
    assert [(m["role"], m["content"]) for m in exported] == [
        ("assistant", "A different opening."),
        ("user", "Hi"),
    ]


def test_a_chat_that_starts_with_the_player_has_no_opening(api, player, character):
    rows = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    body = send(api, json.dumps(rows).encode(), name="lmsys.json",
                player=str(player.pk), character=str(character.pk)).json()  # fmt: skip
    assert body["conversation"]["greeting_index"] is None
    conversation_id = body["conversation"]["id"]
    exported = api.get(f"/api/v1/conversations/{conversation_id}/export?format=openai").json()
    assert [m["role"] for m in exported] == ["user", "assistant"]


def test_a_pippa_row_becomes_a_conversation_with_its_greeting(api, player, character):
    row = {
        "bot_id": "b1",
        "bot_name": "Mira",
        "bot_greeting": "Welcome.",
        "conversation": [
            {"message": "Welcome.", "is_human": False},
            {"message": "Is the lamp lit?", "is_human": True},
            {"message": "It is now.", "is_human": False},
        ],
    }
    response = send(
        api, json.dumps(row).encode() + b"\n", name="pippa.jsonl",
        player=str(player.pk), character=str(character.pk),
    )  # fmt: skip
    assert response.status_code == 201, response.content[:800]
    report = response.json()["report"]
    assert report["format"] == "pippa" and report["character_name"] == "Mira"
    assert report["opening"] == "greeting" and report["stored_messages"] == 2


def test_an_alternate_greeting_with_macros_is_recognised(api, player, character):
    character.alternate_greetings = ["{{char}} waves at {{user}}."]
    character.save()
    chat = jsonl(
        {"user_name": "Ann", "character_name": "Mira"},
        {"name": "Mira", "is_user": False, "mes": "Mira waves at Ann."},
        {"name": "Ann", "is_user": True, "mes": "Hi"},
    )
    body = send(api, chat, player=str(player.pk), character=str(character.pk)).json()
    conversation = Conversation.objects.get(pk=body["conversation"]["id"])
    assert body["report"]["greeting_index"] == 1 and conversation.greeting_index == 1
    assert greeting_for(conversation) == "{{char}} waves at {{user}}."


@pytest.mark.parametrize(
    ("data", "fields", "status", "code"),
    [
        (b"\xff\xfe", {}, 400, "invalid_chat_file"),
        (b'{"mes": "a"}\n{oops', {}, 400, "invalid_chat_file"),
        (jsonl({"user_name": "Ann"}), {}, 422, "empty_chat"),
        (CHAT, {"colour": "red"}, 400, "validation_error"),
        (CHAT, {"character": "not-a-uuid"}, 400, "validation_error"),
        (CHAT, {"persona": "00000000-0000-0000-0000-000000000000"}, 400, "validation_error"),
        (CHAT, {"title": "x" * 201}, 400, "validation_error"),
    ],
)
def test_bad_input_writes_nothing(api, player, character, data, fields, status, code):
    given = {"player": str(player.pk), "character": str(character.pk), **fields}
    before = db_snapshot()
    assert_error(send(api, data, **given), status, code)
    assert snapshot_diff(before, db_snapshot()) == []


def test_no_file_or_two_files(api, player, character):
    given = {"player": str(player.pk), "character": str(character.pk)}
    assert_error(api.post(URL, given, format="multipart"), 400, "validation_error")
    two = [SimpleUploadedFile("a.jsonl", CHAT), SimpleUploadedFile("b.jsonl", CHAT)]
    assert_error(api.post(URL, {**given, "file": two}, format="multipart"), 400, "validation_error")


def test_another_tenant_s_character_or_player_is_not_found(
    api_client_for, player, character, other_tenant
):
    from console.models import Player

    other_api = api_client_for(other_tenant)
    stranger = Player.objects.create(tenant=other_tenant, external_id="x")
    response = send(other_api, CHAT, player=str(stranger.pk), character=str(character.pk))
    assert_error(response, 400, "validation_error")
    assert not Conversation.objects.filter(tenant=other_tenant).exists()


def test_the_import_needs_a_token(client, player, character):
    upload = SimpleUploadedFile("a.jsonl", CHAT)
    response = client.post(
        URL, {"file": upload, "player": str(player.pk), "character": str(character.pk)}
    )
    assert response.status_code == 401


def test_times_in_the_future_are_not_kept(api, player, character):
    chat = jsonl(
        {"name": "Ann", "is_user": True, "mes": "Hi", "send_date": "2999-01-01T00:00:00Z"},
        {"name": "Mira", "is_user": False, "mes": "Hello"},
    )
    body = send(api, chat, player=str(player.pk), character=str(character.pk)).json()
    session = Conversation.objects.get(pk=body["conversation"]["id"]).session_id
    stamps = list(
        Message.objects.filter(session_id=session).order_by("ts").values_list("ts", flat=True)
    )
    assert stamps[0] < stamps[1] <= time.time() * 1000
