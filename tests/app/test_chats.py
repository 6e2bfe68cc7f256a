"""My chats: newest first, last message, unread state, rename, archive, delete, export; the
list in a fixed number of queries whatever the number of chats; the chat page."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.services import save_message
from roleplay.models import Conversation

pytestmark = pytest.mark.django_db


@pytest.fixture
def start(player_client, make_character):
    from roleplay.conversations.services.conversations import start_conversation

    account = player_client.account

    def make(name: str, *, player=None, **fields):
        character = make_character(name)
        return start_conversation(
            account.tenant, character=character, player=player or account.player, **fields
        )

    return make


def _say(conversation, role: str, text: str) -> None:
    save_message(conversation.tenant, conversation.session_id, role=role, content=text)


def _rows(client, **query):
    return list(client.get("/app/chats/", query).context["page"].object_list)


def test_newest_first_with_the_last_message_and_unread_replies(player_client, start):
    older, newer, quiet = start("Older"), start("Newer"), start("Quiet")
    _say(older, "user", "hello older")
    _say(newer, "user", "hello newer")
    _say(newer, "assistant", "a reply you have not read")
    rows = _rows(player_client)
    assert [r.pk for r in rows] == [newer.pk, older.pk, quiet.pk]
    assert rows[0].last == {"text": "a reply you have not read", "role": "assistant"}
    assert [r.unread for r in rows] == [True, False, False]

    assert player_client.get(f"/app/chats/{newer.pk}/").status_code == 200  # read it
    assert not any(r.unread for r in _rows(player_client))
    _say(newer, "assistant", "another one")
    assert _rows(player_client)[0].unread
    assert player_client.post(f"/app/chats/{newer.pk}/read/").status_code == 204
    assert not _rows(player_client)[0].unread


def test_only_ones_own_chats_are_listed_and_opened(player_client, other_client, start):
    mine = start("Mine")
    theirs = start("Theirs", player=other_client.account.player)
    assert [r.pk for r in _rows(player_client)] == [mine.pk]
    for path in ("", "export/", "?part=transcript"):
        assert player_client.get(f"/app/chats/{theirs.pk}/{path}").status_code == 404
    for action in ("read", "rename", "archive", "delete"):
        assert player_client.post(f"/app/chats/{theirs.pk}/{action}/").status_code == 404
    assert Conversation.objects.filter(pk=theirs.pk, status="active", title="").exists()


def test_the_list_takes_the_same_queries_for_3_or_40_chats(player_client, start):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert player_client.get("/app/chats/").status_code == 200
        return len(queries)

    for index in range(3):
        _say(start(f"C{index}"), "assistant", "hi")
    few = count()
    for index in range(37):
        _say(start(f"D{index}"), "assistant", "hi")
    assert count() == few


def test_rename_archive_unarchive_and_delete(player_client, start):
    chat = start("Renamed")
    _say(chat, "user", "hello")
    player_client.post(f"/app/chats/{chat.pk}/rename/", {"title": "  Our tale  "})
    chat.refresh_from_db()
    assert chat.title == "Our tale"
    assert (
        player_client.post(f"/app/chats/{chat.pk}/rename/", {"title": "x" * 201}).status_code == 302
    )
    chat.refresh_from_db()
    assert chat.title == "Our tale"

    player_client.post(f"/app/chats/{chat.pk}/archive/")
    assert _rows(player_client) == []
    assert [r.pk for r in _rows(player_client, archived="1")] == [chat.pk]
    player_client.post(f"/app/chats/{chat.pk}/archive/")
    assert [r.pk for r in _rows(player_client)] == [chat.pk]

    response = player_client.post(f"/app/chats/{chat.pk}/delete/")
    assert response["Location"] == "/app/chats/"
    assert not Conversation.objects.filter(pk=chat.pk).exists()
    from memory.models import Message

    assert not Message.objects.filter(session_id=str(chat.pk)).exists()


def test_export_is_a_sillytavern_jsonl_file(player_client, start):
    chat = start("Exported")
    _say(chat, "user", "hello there")
    _say(chat, "assistant", "general greeting")
    response = player_client.get(f"/app/chats/{chat.pk}/export/")
    assert response.status_code == 200
    assert ".jsonl" in response["Content-Disposition"]
    lines = [json.loads(line) for line in response.content.decode().splitlines()]
    texts = [line.get("mes") for line in lines[1:]]
    assert "hello there" in texts and "general greeting" in texts


def test_the_chat_page_has_the_players_controls_only(player_client, start):
    chat = start("Speaker")
    _say(chat, "user", "hello")
    _say(chat, "assistant", "welcome")
    page = player_client.get(f"/app/chats/{chat.pk}/").content.decode()
    assert 'id="composer"' in page and "welcome" in page
    assert "/console/" not in page  # no console menu, links or avatars
    assert "msg-branch" not in page
    part = player_client.get(f"/app/chats/{chat.pk}/", {"part": "transcript"})
    assert part.status_code == 200 and b'id="transcript"' in part.content


def test_a_group_chat_shows_each_speakers_avatar_from_the_apps_own_route(
    player_client, other_client, start, make_character
):
    from roleplay.groups.services import add_member

    group = start("Mira")
    jon = make_character("Jon", visibility="private")  # not in the library
    add_member(group, jon)
    outsider = make_character("Ada")
    save_message(
        group.tenant, group.session_id, role="assistant", content="Jon here.",
        metadata={"speaker": {"id": str(jon.pk), "name": "Jon"}},
    )  # fmt: skip
    page = player_client.get(f"/app/chats/{group.pk}/").content.decode()
    url = f"/app/chats/{group.pk}/members/{jon.pk}/avatar/"
    assert f'src="{url}"' in page and "data-member-avatar=" in page
    assert player_client.get(url).status_code == 200
    assert player_client.get(f"/app/characters/{jon.pk}/avatar/").status_code == 404
    assert (
        player_client.get(f"/app/chats/{group.pk}/members/{outsider.pk}/avatar/").status_code == 404
    )
    assert other_client.get(url).status_code == 404
