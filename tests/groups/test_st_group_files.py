"""SillyTavern group chats round-trip (docs/groups.md, "Chat files"): a group's
``groups/<id>.json`` and its ``.jsonl`` become one group conversation through
``POST /api/v1/conversations/import-group`` and the console's import page, with its
members, settings and each reply's speaker; ``GET .../export-group`` and ``.../export``
give them back, and importing those gives the same conversation again. Bad input is a
coded 4xx that writes nothing; another tenant's characters are never members."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memory.models import Message, MessageAlternative
from roleplay.groups.selectors import members_of
from roleplay.groups.speaking import choose
from roleplay.models import Character, Conversation, TurnKind
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff
from tests.matrix.conftest import console_client  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/v1/conversations/import-group"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sillytavern"
GROUP = (FIXTURES / "groups" / "1704103200000.json").read_bytes()
CHAT = (FIXTURES / "group chats" / "2024-01-01@12h00m00s.jsonl").read_bytes()
CHAT_NAME = "2024-01-01@12h00m00s.jsonl"


@pytest.fixture
def operator_client(console_client, tenant):  # noqa: F811
    return console_client(tenant, "operator")


@pytest.fixture
def cast(character, jon, ada):
    """Mira, Jon (a SillyTavern card's talkativeness) and Ada, the fixture's members."""
    jon.extensions = {"talkativeness": "0.8"}
    jon.save(update_fields=["extensions"])
    return character, jon, ada


def send(client, group: bytes | None = GROUP, chat: bytes | None = CHAT, key=None, **fields):
    body = dict(fields)
    if group is not None:
        body["group"] = SimpleUploadedFile("1704103200000.json", group)
    if chat is not None:
        body["file"] = SimpleUploadedFile(CHAT_NAME, chat)
    extra = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post(URL, body, format="multipart", **extra)


def imported(response) -> Conversation:
    assert response.status_code == 201, response.content[:800]
    return Conversation.objects.get(pk=response.json()["conversation"]["id"])


def history(conversation: Conversation) -> list[tuple]:
    """(role, content, speaker name, speaker id, alternatives, selected) of each message."""
    rows = Message.objects.filter(session_id=conversation.session_id).order_by("ts")
    out = []
    for m in rows:
        speaker = m.metadata.get("speaker") or {}
        texts = list(
            MessageAlternative.objects.filter(message=m)
            .order_by("index")
            .values_list("content", flat=True)
        )
        out.append(
            (m.role, m.content, speaker.get("name"), speaker.get("id"), texts,
             m.selected_alternative)
        )  # fmt: skip
    return out


def test_a_group_and_its_chat_become_one_group_conversation(api, player, cast):
    mira, jon, ada = cast
    response = send(api, player=str(player.pk))
    conversation = imported(response)
    assert conversation.character_id == mira.pk and conversation.title == "The Lighthouse"
    assert (conversation.group_mode, conversation.join_cards) == ("list", True)
    assert (conversation.auto_delay_ms, conversation.auto_turns) == (3000, 0)
    members = members_of(conversation)
    assert [(m.character.pk, m.muted, m.talkativeness) for m in members] == [
        (mira.pk, False, 0.5), (jon.pk, False, 0.8), (ada.pk, True, 0.5),
    ]  # fmt: skip
    report = response.json()["report"]
    assert [(m["member"], m["name"]) for m in report["members"]] == [
        ("Mira.png", "Mira"), ("Jon.png", "Jon"), ("default_Ada.png", "Ada"),
    ]  # fmt: skip
    assert report["opening"] == "greeting" and report["skipped"] == {"hidden": 1}
    assert report["stored_messages"] == 6 and report["unmatched_speakers"] == []
    # Mira's greeting is the conversation's opening; every reply keeps its speaker.
    assert conversation.greeting_index == 0
    rows = history(conversation)
    assert [(r[0], r[2], r[3]) for r in rows] == [
        ("assistant", "Jon", str(jon.pk)),
        ("user", None, None),
        ("assistant", "Jon", str(jon.pk)),
        ("assistant", "Ada", str(ada.pk)),
        ("user", None, None),
        ("assistant", "Mira", str(mira.pk)),
    ]
    assert rows[2][1:] == (
        "Lit? I trimmed the wick myself.", "Jon", str(jon.pk),
        ["Not yet, lass.", "Lit? I trimmed the wick myself."], 1,
    )  # fmt: skip
    # The group's own rules read those speakers: in a list group, Jon follows Mira.
    assert choose(conversation, TurnKind.GROUP).speaker.pk == jon.pk


def test_export_then_import_gives_the_same_group(api, player, cast):
    first = imported(send(api, player=str(player.pk)))
    assert first.allow_self_responses is False
    patched = api.patch(
        f"/api/v1/conversations/{first.pk}", {"allow_self_responses": True}, format="json"
    )
    assert patched.status_code == 200, patched.content
    first.refresh_from_db()
    group = api.get(f"/api/v1/conversations/{first.pk}/export-group")
    assert group.status_code == 200 and group["Content-Type"].startswith("application/json")
    written = json.loads(group.content)
    assert written["members"] == ["Mira.png", "Jon.png", "Ada.png"]
    assert written["disabled_members"] == ["Ada.png"]
    assert written["allow_self_responses"] is True
    assert (written["activation_strategy"], written["generation_mode"]) == (1, 1)
    assert written["auto_mode_delay"] == 3 and written["chats"] == [written["chat_id"]]
    chat = api.get(f"/api/v1/conversations/{first.pk}/export")
    assert chat.status_code == 200
    lines = [json.loads(line) for line in chat.content.decode().splitlines()]
    assert [line.get("original_avatar") for line in lines[2:] if not line["is_user"]] == [
        "Jon.png", "Jon.png", "Ada.png", "Mira.png",
    ]  # fmt: skip

    again = imported(send(api, group.content, chat.content, player=str(player.pk)))
    assert again.pk != first.pk
    fields = ("character_id", "title", "group_mode", "join_cards", "auto_delay_ms")
    for field in (*fields, "allow_self_responses"):
        assert getattr(again, field) == getattr(first, field), field
    assert again.greeting_index == first.greeting_index == 0
    assert [(m.character.pk, m.muted, m.talkativeness) for m in members_of(again)] == [
        (m.character.pk, m.muted, m.talkativeness) for m in members_of(first)
    ]
    assert history(again) == history(first)


def test_a_group_alone_opens_with_its_first_member(api, player, cast):
    # Without its chat, nothing says default_Ada.png is Ada: the group names her file.
    group = GROUP.replace(b"default_Ada.png", b"Ada.png")
    conversation = imported(send(api, group, chat=None, player=str(player.pk)))
    assert conversation.greeting_index == 0 and len(members_of(conversation)) == 3
    assert not Message.objects.filter(session_id=conversation.session_id).exists()


def test_the_import_replays_by_idempotency_key(api, player, cast):
    first = send(api, player=str(player.pk), key="group-1")
    again = send(api, player=str(player.pk), key="group-1")
    assert again.status_code == 201 and again.json()["replayed"] is True
    assert again.json()["conversation"]["id"] == first.json()["conversation"]["id"]
    changed = send(api, GROUP.replace(b'"auto_mode_delay": 3', b'"auto_mode_delay": 4'),
                   player=str(player.pk), key="group-1")  # fmt: skip
    assert_error(changed, 409, "idempotency_conflict")


def _group(**changes) -> bytes:
    item = json.loads(GROUP)
    item.update(changes)
    return json.dumps(item).encode()


@pytest.mark.parametrize(
    ("group", "chat", "status", "code"),
    [
        (_group(members=["Mira.png", "Nobody.png"]), CHAT, 422, "unknown_member"),
        (b'{"members": ["Mira.png",', CHAT, 400, "invalid_group_file"),
        (b"\xff\xfe", CHAT, 400, "invalid_group_file"),
        (b'["Mira.png"]', CHAT, 400, "invalid_group_file"),
        (_group(members="Mira.png"), CHAT, 400, "invalid_group_file"),
        (_group(members=["Mira.png", 7]), CHAT, 400, "invalid_group_file"),
        (_group(members=[]), CHAT, 422, "empty_group"),
        (_group(members=["Mira.png", "Jon.png", "Mira.png"]), CHAT, 422, "duplicate_member"),
        (_group(members=["Mira.png", "mira.PNG"]), CHAT, 422, "duplicate_member"),
        (_group(members=[f"M{i}.png" for i in range(13)]), CHAT, 422, "group_full"),
        (_group(activation_strategy=9), CHAT, 400, "invalid_group_file"),
        (_group(auto_mode_delay="soon"), CHAT, 400, "invalid_group_file"),
        (GROUP.replace(b'"Jon.png",', b'"Jon\\ud800.png",', 1), CHAT, 422, "invalid_text"),
        (GROUP, CHAT.replace(b"Is the lamp", b"Is \\udc00 the lamp"), 422, "invalid_text"),
        (GROUP, CHAT.replace(b'"mes":"Welcome."', b'"mes":"a\\u0000b"'), 422, "invalid_text"),
        (GROUP, b'{"mes": "a"}\n{oops', 400, "invalid_chat_file"),
        (GROUP + b" " * (1024 * 1024), CHAT, 413, "file_too_large"),
        (None, CHAT, 400, "validation_error"),
    ],
)
def test_bad_input_writes_nothing(api, player, cast, group, chat, status, code):
    before = db_snapshot()
    error = assert_error(send(api, group, chat, player=str(player.pk)), status, code)
    assert snapshot_diff(before, db_snapshot()) == []
    if code in ("unknown_member", "duplicate_member"):
        assert error["details"]["member"] in ("Nobody.png", "Mira.png", "mira.PNG")


def test_a_chat_over_the_import_limit_is_413(api, player, cast):
    from roleplay.conversations.chats.read import MAX_FILE_BYTES

    before = db_snapshot()
    huge = CHAT + b"\n" * (MAX_FILE_BYTES + 1 - len(CHAT))
    assert_error(send(api, chat=huge, player=str(player.pk)), 413, "file_too_large")
    assert snapshot_diff(before, db_snapshot()) == []


def test_two_characters_of_one_name_are_ambiguous(api, tenant, player, cast):
    Character.objects.create(tenant=tenant, name="Jon")
    error = assert_error(send(api, player=str(player.pk)), 422, "member_ambiguous")
    assert error["details"]["member"] == "Jon.png" and len(error["details"]["characters"]) == 2
    assert not Conversation.objects.filter(tenant=tenant).exists()


def test_another_tenant_s_characters_are_never_members(api_client_for, make_tenant, player, cast):
    from console.models import Player

    other = make_tenant("initech")
    Character.objects.create(tenant=other, name="Mira")
    Character.objects.create(tenant=other, name="Jon")
    stranger = Player.objects.create(tenant=other, external_id="x")
    other_api = api_client_for(other)
    error = assert_error(send(other_api, player=str(stranger.pk)), 422, "unknown_member")
    assert error["details"]["member"] == "default_Ada.png"
    assert not Conversation.objects.filter(tenant=other).exists()


def test_another_player_s_own_character_is_not_a_member(api, tenant, player, character, jon):
    from console.models import Player

    someone = Player.objects.create(tenant=tenant, external_id="p-2")
    Character.objects.create(tenant=tenant, name="Ada", owner_player=someone)
    error = assert_error(send(api, player=str(player.pk)), 422, "unknown_member")
    assert error["details"]["member"] == "default_Ada.png"


def test_a_foreign_group_conversation_is_not_found(api_client_for, make_tenant, group):
    other_api = api_client_for(make_tenant("initech"))
    response = other_api.get(f"/api/v1/conversations/{group.pk}/export-group")
    assert_error(response, 404, "not_found")


def test_a_reply_of_a_former_member_keeps_its_speaker(api, tenant, player, cast):
    mira, jon, _ = cast
    group = _group(members=["Mira.png", "Jon.png"], disabled_members=[])
    conversation = imported(send(api, group, player=str(player.pk)))
    ada = next(r for r in history(conversation) if r[2] == "Ada")
    assert ada[3] == str(Character.objects.get(tenant=tenant, name="Ada").pk)
    strangers = CHAT.replace(b'"name":"Ada"', b'"name":"Zed"').replace(
        b"default_Ada.png", b"Zed.png"
    )
    response = send(api, group, strangers, player=str(player.pk))
    assert response.json()["report"]["unmatched_speakers"] == ["Zed"]
    zed = next(r for r in history(imported(response)) if r[2] == "Zed")
    assert zed[3] is None  # only the name the file shows


def test_the_console_imports_a_group_and_downloads_it(operator_client, tenant, cast):
    page = operator_client.get("/console/conversations/import/").content.decode()
    assert 'name="group"' in page
    response = operator_client.post(
        "/console/conversations/import/",
        {"group": SimpleUploadedFile("1704103200000.json", GROUP),
         "file": SimpleUploadedFile(CHAT_NAME, CHAT)},
    )  # fmt: skip
    assert response.status_code == 302, response.content[:500]
    conversation = Conversation.objects.get(tenant=tenant)
    assert [m.character.name for m in members_of(conversation)] == ["Mira", "Jon", "Ada"]
    shown = operator_client.get(response["Location"]).content.decode()
    assert "Imported 6 messages from 2024-01-01@12h00m00s.jsonl with Mira, Jon, Ada" in shown
    assert 'id="conversation-export-group"' in shown
    download = operator_client.get(f"/console/conversations/{conversation.pk}/export-group/")
    assert json.loads(download.content)["members"] == ["Mira.png", "Jon.png", "Ada.png"]


def test_the_console_shows_a_bad_group_its_code(operator_client, tenant, cast):
    response = operator_client.post(
        "/console/conversations/import/",
        {"group": SimpleUploadedFile("g.json", _group(members=["Nobody.png"]))},
    )
    assert response.status_code == 200 and "unknown_member" in response.content.decode()
    assert not Conversation.objects.filter(tenant=tenant).exists()
