"""Console pages of memory recall: the playground runs a player's recall and marks the query's
words in escaped text; bad input is a form error, never a 500, and another tenant's player
or conversation is not found. The pack page shows the key the next turn reads and whether a
pack is in Redis (hit with its age, items and text; miss). Viewers read both pages."""

from __future__ import annotations

import time

import pytest

from console.models import Player
from memory import packs
from memory.turn_reads import turn_memory
from memory.views.recall import highlight
from roleplay.models import Character, Conversation
from tests.memory.test_recall import _conversation

pytestmark = pytest.mark.django_db

RECALL = "/console/memory/recall/"
LINES = [
    ("user", "Good evening. Is the lighthouse open tonight?"),
    ("assistant", "It is. Mind the wet stairs."),
    ("user", "I left my copper key with the harbour master. <script>alert(1)</script>"),
    ("assistant", "Then you will need to fetch it before the gate closes."),
    ("user", "我把铜钥匙交给了港务长。"),
    ("assistant", "The fog will lift by dawn."),
]


def _pack_key(conversation) -> str:
    memory = turn_memory(
        conversation.tenant_id,
        conversation.player_id,
        str(conversation.character_id),
        conversation.session_id,
    )
    return packs.owner_of(conversation).key(memory.config, memory.owner_revision)


@pytest.fixture
def theirs(other_tenant):
    player = Player.objects.create(tenant=other_tenant, external_id="x-1")
    character = Character.objects.create(tenant=other_tenant, name="Stranger")
    conversation = Conversation.objects.create(
        tenant=other_tenant, player=player, character=character
    )
    return {"player": player, "conversation": conversation}


# The highlighter, a pure function.


def test_highlight_marks_whole_words_case_insensitively_in_escaped_text():
    out = highlight('The KEY & keys <b>key</b> "monkey"', "key")
    assert out == (
        "The <mark>KEY</mark> &amp; keys &lt;b&gt;<mark>key</mark>&lt;/b&gt; &quot;monkey&quot;"
    )


def test_highlight_never_marks_inside_markup_and_joins_cjk_substrings():
    assert highlight("a < b", "lt b") == "a &lt; <mark>b</mark>"
    assert highlight("<script>", "script") == "&lt;<mark>script</mark>&gt;"
    assert highlight("我把铜钥匙交给了", "铜钥匙在哪") == "我把<mark>铜钥匙</mark>交给了"
    assert highlight("plain", "") == "plain"


# The playground.


def test_hits_are_shown_with_marks_and_escaped_html(operator_client, tenant, player, character):
    conversation = _conversation(tenant, player, character, LINES)
    response = operator_client.get(
        RECALL, {"player": player.pk, "query": "copper key", "k": 3, "kinds": ["message"]}
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="recall-hits"' in body
    assert "<mark>copper</mark> <mark>key</mark>" in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<script>alert(1)" not in body
    assert f'href="/console/conversations/{conversation.pk}/"' in body


def test_a_conversation_filter_and_cjk_query(operator_client, tenant, player, character):
    conversation = _conversation(tenant, player, character, LINES)
    _conversation(tenant, player, character, [("user", "铜钥匙 again elsewhere")])
    response = operator_client.get(
        RECALL,
        {"player": player.pk, "query": "铜钥匙", "k": 10, "conversation": str(conversation.pk)},
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert "<mark>铜钥匙</mark>交给了" in body, body[body.find("<form") :]
    assert "again elsewhere" not in body


def test_the_empty_form_shows_no_hits(viewer_client, player):
    response = viewer_client.get(RECALL)
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="recall-form"' in body and 'id="recall-hits"' not in body
    assert f'value="{player.pk}"' in body


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"k": 0}, "k"),
        ({"k": 51}, "k"),
        ({"k": "many"}, "k"),
        ({"query": "  "}, "query"),
        ({"player": ""}, "player"),
        ({"player": 999999}, "player"),
        ({"player": "abc"}, "player"),
        ({"player": 2**64}, "player"),
        ({"query": "x" * 4001}, "query"),
        ({"conversation": "not-a-uuid"}, "conversation"),
        ({"conversation": "00000000-0000-0000-0000-000000000000"}, "conversation"),
        ({"kinds": ["nonsense"]}, "kinds"),
    ],
)
def test_bad_input_is_a_form_error(operator_client, player, change, field):
    params = {"player": player.pk, "query": "key", "k": 5, **change}
    response = operator_client.get(RECALL, params)
    assert response.status_code == 200
    body = response.content.decode()
    assert f'id="recall-{field}-errors"' in body
    assert 'id="recall-hits"' not in body


def test_another_tenants_player_or_conversation_is_not_found(
    operator_client, tenant, player, character, theirs
):
    _conversation(tenant, player, character, LINES)
    response = operator_client.get(RECALL, {"player": theirs["player"].pk, "query": "key"})
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="recall-player-errors"' in body and "No such player." in body
    response = operator_client.get(
        RECALL,
        {"player": player.pk, "query": "key", "conversation": str(theirs["conversation"].pk)},
    )
    body = response.content.decode()
    assert 'id="recall-conversation-errors"' in body and "No such conversation." in body


def test_another_players_conversation_is_refused(operator_client, tenant, player, character):
    other = Player.objects.create(tenant=tenant, external_id="p-2")
    theirs = _conversation(tenant, other, character, LINES[:2])
    response = operator_client.get(
        RECALL, {"player": player.pk, "query": "lighthouse", "conversation": str(theirs.pk)}
    )
    assert "not the player&#x27;s" in response.content.decode()


def test_a_viewer_can_recall(viewer_client, tenant, player, character):
    _conversation(tenant, player, character, LINES)
    response = viewer_client.get(RECALL, {"player": player.pk, "query": "lighthouse"})
    assert response.status_code == 200
    assert "<mark>lighthouse</mark>" in response.content.decode()


# The pack preview.


def _pack_url(conversation) -> str:
    return f"/console/conversations/{conversation.pk}/memory-pack/"


def test_pack_preview_hit(viewer_client, tenant, player, character):
    conversation = _conversation(tenant, player, character, LINES[:2])
    key = _pack_key(conversation)
    items = [
        {
            "kind": "message",
            "id": "m1",
            "text": "user: my <copper> key",
            "score": 0.8123,
            "conversation_id": str(conversation.pk),
            "message_ids": ["m1"],
            "created_at": "2026-01-01T00:00:00+00:00",
        }
    ]
    assert packs.store(key, items, packs.render(items))
    try:
        time.sleep(0.05)
        response = viewer_client.get(_pack_url(conversation))
    finally:
        packs._client().delete(key)
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="pack-status-value">hit<' in body
    assert f'id="pack-redis-key">{key}<' in body
    assert "0.8123" in body and "user: my &lt;copper&gt; key" in body
    assert packs.HEADER.split(" (")[0] in body
    age = float(body.split('id="pack-age">')[1].split("<")[0])
    assert 0 <= age < 60


def test_pack_preview_miss(operator_client, tenant, player, character):
    conversation = _conversation(tenant, player, character, LINES[:2])
    packs._client().delete(_pack_key(conversation))
    response = operator_client.get(_pack_url(conversation))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="pack-status-value">miss<' in body and 'id="pack-miss"' in body
    assert 'id="pack-revision">0<' in body


def test_pack_preview_of_a_foreign_conversation_is_a_404(operator_client, theirs):
    assert operator_client.get(_pack_url(theirs["conversation"])).status_code == 404


def test_the_conversation_page_links_the_pack(operator_client, tenant, player, character):
    conversation = _conversation(tenant, player, character, LINES[:2])
    body = operator_client.get(f"/console/conversations/{conversation.pk}/").content.decode()
    assert _pack_url(conversation) in body
    assert RECALL in operator_client.get("/console/memory/").content.decode()
