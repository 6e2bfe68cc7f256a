"""Operator pages in plain language: the Story, Agent V2, summary and memory pages name the
character, conversation and player instead of showing ids, keep internal terms (status
codes, the Redis key, the owner revision, message ids) inside a "Details" fold, and an empty
page links to the setting that turns its feature on."""

from __future__ import annotations

import re
import uuid
from html import unescape

import pytest

from memory import services as message_store
from memory.entries import services as entries
from roleplay.models import Conversation, PlanningRun, Turn
from roleplay.scenarios.services import create_scenario
from story.engine.evidence import capture
from tests.story.story_rows import envelope, make_scenario, write

pytestmark = pytest.mark.django_db


def shown(response) -> str:
    """The page's main content as a person reads it: without the Details folds, attribute
    values (titles, hrefs) or tags."""
    assert response.status_code == 200, response.status_code
    html = response.content.decode()
    main = html[html.index("<main>") : html.index("</main>")]
    main = re.sub(r"<details\b.*?</details>", "", main, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", main))


def folded(response) -> str:
    """What the Details folds of the page hold."""
    html = response.content.decode()
    return " ".join(re.findall(r"<details\b.*?</details>", html, flags=re.S))


@pytest.fixture
def titled(conversation):
    Conversation.objects.filter(pk=conversation.pk).update(title="The lighthouse")
    conversation.refresh_from_db()
    return conversation


def test_the_story_page_says_status_names_and_quotes_instead_of_codes(operator_client, titled):
    scenario = make_scenario(titled.tenant)
    said = message_store.save_message(
        titled.tenant, titled.session_id, role="user", content="I show the copper key."
    )
    reply = message_store.save_message(
        titled.tenant, titled.session_id, role="assistant", content="Mira takes the key."
    )
    piece = capture(str(said.id), said.content, "user_action", 1).as_json()
    pending = {
        "messageId": str(reply.id),
        "userMessageId": str(said.id),
        "sourcePosition": 1,
        "userContentHash": piece["sha256"],
        "stage": {"event": {"title": "the gate"}},
    }
    unresolved = [{"id": "e1", "title": "the key", "evidence": [piece], "attempts": []}]
    env = envelope(titled, pending=pending, unresolved=unresolved)
    write(titled, scenario, 0, env, status="waiting_for_acceptance", source_position=1)

    response = operator_client.get(f"/console/conversations/{titled.pk}/story/")
    page = shown(response)
    assert "Waiting for the player's next message" in page
    assert "Harbour story" in page and "The lighthouse" in page and "Ann" in page
    assert "“I show the copper key.”" in page and "“Mira takes the key.”" in page
    for internal in ("waiting_for_acceptance", str(scenario.pk), str(said.id), str(reply.id)):
        assert internal not in page, internal
        assert internal in folded(response), internal


def test_an_empty_story_links_to_turning_story_on(operator_client, titled):
    page = operator_client.get(f"/console/conversations/{titled.pk}/story/").content.decode()
    assert 'href="/console/scenarios/new/?template=story" id="story-turn-on"' in page
    plain = create_scenario(titled.tenant, name="Plain")
    Conversation.objects.filter(pk=titled.pk).update(scenario=plain)
    page = operator_client.get(f"/console/conversations/{titled.pk}/story/").content.decode()
    assert f'href="/console/scenarios/{plain.pk}/#capability-storyV1" id="story-turn-on"' in page


def test_agent_pages_name_the_run_mode_and_turn_not_ids(operator_client, titled):
    plain = create_scenario(titled.tenant, name="Plain")
    Conversation.objects.filter(pk=titled.pk).update(scenario=plain)
    response = operator_client.get(f"/console/conversations/{titled.pk}/agent/")
    page = response.content.decode()
    assert f'href="/console/scenarios/{plain.pk}/#capability-agenticV2" id="agent-turn-on"' in page
    assert "Run mode" in shown(response)

    reply = message_store.save_message(
        titled.tenant, titled.session_id, role="assistant", content="The fog lifts at dawn."
    )
    turn = Turn.objects.create(
        tenant=titled.tenant,
        conversation=titled,
        client_message_id="c-1",
        assistant_message_id=reply.id,
        status="complete",
    )
    PlanningRun.objects.create(
        tenant=titled.tenant,
        turn=turn,
        conversation=titled,
        scenario=plain,
        assistant_message_id=reply.id,
        source_turn=3,
    )
    listing = operator_client.get(f"/console/conversations/{titled.pk}/agent/")
    assert "After message 3" in shown(listing) and str(turn.pk) not in shown(listing)
    run = operator_client.get(f"/console/conversations/{titled.pk}/agent/runs/{turn.pk}/")
    page = shown(run)
    assert "The lighthouse" in page and "Mira" in page and "Ann" in page
    assert "“The fog lifts at dawn.”" in page
    assert str(turn.pk) not in page and str(reply.id) not in page
    assert str(turn.pk) in folded(run) and str(reply.id) in folded(run)


def test_an_empty_summaries_page_links_to_compact(operator_client, titled):
    page = operator_client.get(f"/console/conversations/{titled.pk}/summaries/").content.decode()
    assert 'id="summaries-turn-on"' in page and "?template=long_chats" in page


def test_memory_entries_name_character_and_conversation(operator_client, titled, player):
    empty = operator_client.get("/console/memory/").content.decode()
    assert 'id="memory-turn-on"' in empty and 'href="/console/memory/settings/"' in empty
    entry = entries.add_entry(
        titled.tenant,
        player,
        kind="fact",
        scope="session",
        content="Likes the lamp room.",
        character_id=str(titled.character_id),
        session_id=titled.session_id,
    )
    for url in ("/console/memory/", f"/console/memory/entries/{entry.pk}/"):
        response = operator_client.get(url)
        page = shown(response)
        assert "Mira" in page and "The lighthouse" in page, url
        assert str(titled.character_id) not in page and str(titled.pk) not in page, url


def test_the_memory_pack_keeps_the_key_and_revision_in_details(operator_client, titled):
    response = operator_client.get(f"/console/conversations/{titled.pk}/memory-pack/")
    page = shown(response)
    assert "Ann" in page and "Mira" in page and "The lighthouse" in page
    for internal in ("Redis", "Owner revision", "owner revision", str(titled.pk)):
        assert internal not in page, internal
    assert "Redis key" in folded(response) and "Owner revision" in folded(response)


def test_consolidation_runs_name_their_conversation(operator_client, titled, player):
    from memory.models import ConsolidationRun

    empty = operator_client.get("/console/memory/jobs/").content.decode()
    assert 'href="/console/memory/settings/" id="runs-turn-on"' in empty
    ConsolidationRun.objects.create(
        tenant=titled.tenant, player=player, conversation_id=titled.pk, message_ids=[]
    )
    page = shown(operator_client.get("/console/memory/jobs/"))
    assert "The lighthouse" in page and str(titled.pk)[:8] not in page


def test_an_unknown_conversation_id_stays_out_of_sight(operator_client, titled, player):
    entries.add_entry(
        titled.tenant,
        player,
        kind="fact",
        scope="session",
        content="From elsewhere.",
        session_id=str(uuid.uuid4()),
    )
    page = shown(operator_client.get("/console/memory/"))
    assert "another conversation" in page
