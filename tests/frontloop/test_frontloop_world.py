"""The visual world of a conversation: its rules (pure), compare-and-set revisions through
every door (service, REST, console), and the turn's update after pictures, which the next
pictures read."""

from __future__ import annotations

import json
import time

import pytest

from roleplay.frontloop import world
from roleplay.frontloop.engine import world as rules
from roleplay.llm.scripted_server import Reply
from tests.api.helpers import assert_error
from tests.frontloop.pictures_support import final, run, script

MIRA = {"appearance": "grey eyes, short dark hair", "clothing": "oilskin coat", "injuries": ""}
STATE = {"characters": {"Mira": MIRA}, "scene": "the lighthouse gate at dusk, rain"}


# --- the rules (pure) -------------------------------------------------------------------------


def test_a_state_is_checked_and_filled():
    assert rules.check_state({}) == rules.EMPTY
    checked = rules.check_state({"characters": {"Mira": {"clothing": "coat"}}})
    assert checked["characters"]["Mira"] == {"appearance": "", "clothing": "coat", "injuries": ""}


@pytest.mark.parametrize(
    ("state", "field"),
    [
        ([], "state"),
        ({"weather": "rain"}, "weather"),
        ({"scene": 3}, "scene"),
        ({"scene": "x" * (rules.MAX_SCENE + 1)}, "scene"),
        ({"characters": []}, "characters"),
        ({"characters": {"Mira": {"hair": "dark"}}}, "characters.Mira.hair"),
        (
            {"characters": {"Mira": {"clothing": "x" * (rules.MAX_TRAIT + 1)}}},
            "characters.Mira.clothing",
        ),
        ({"characters": {"Mira": {}, "mira": {}}}, "characters.mira"),
        ({"characters": {" ": {}}}, "characters. "),
        ({"characters": {str(i): {} for i in range(rules.MAX_CHARACTERS + 1)}}, "characters"),
        ({"scene": "bad \ud800 text"}, "scene"),
        ({"scene": "nul \x00"}, "scene"),
    ],
)
def test_a_bad_state_names_its_field(state, field):
    with pytest.raises(rules.WorldInvalid) as caught:
        rules.check_state(state)
    assert caught.value.field == field


def test_limits_hold_at_their_edge():
    at = {
        "characters": {str(i): {} for i in range(rules.MAX_CHARACTERS)},
        "scene": "x" * rules.MAX_SCENE,
    }
    assert len(rules.check_state(at)["characters"]) == rules.MAX_CHARACTERS


def test_a_model_answer_is_read_from_its_first_object():
    answer = "Here it is:\n```json\n" + json.dumps(STATE) + "\n```\nDone."
    assert rules.parse_update(answer)["scene"] == STATE["scene"]
    for bad in ("no json", "{not json", json.dumps({"scene": 1})):
        with pytest.raises(rules.WorldInvalid):
            rules.parse_update(bad)
    assert "Mira: appearance: grey eyes" in rules.describe(rules.check_state(STATE))


# --- revisions (service) -----------------------------------------------------------------------


@pytest.mark.django_db
def test_commits_are_compare_and_set_and_kept_as_revisions(conversation):
    assert world.world_of(conversation) == (0, rules.EMPTY)
    assert world.commit(conversation, expected=0, state=STATE, source="operator") == 1
    with pytest.raises(world.WorldConflict) as stale:
        world.commit(conversation, expected=0, state={}, source="operator")
    assert stale.value.details["current_revision"] == 1
    assert world.commit(conversation, expected=1, state={"scene": "noon"}, source="turn") == 2
    assert world.restore(conversation, expected=2, revision=1) == 3
    assert world.world_of(conversation)[1]["scene"] == STATE["scene"]
    assert [(r.revision, r.source) for r in world.revisions(conversation)] == [
        (3, "restore"), (2, "turn"), (1, "operator"),
    ]  # fmt: skip
    with pytest.raises(world.WorldStateInvalid):
        world.commit(conversation, expected=3, state={"scene": 5}, source="operator")
    assert world.world_of(conversation)[0] == 3  # a refused state changes nothing


# --- REST ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_rest_door_reads_edits_and_restores(api, api_client_for, other_tenant, conversation):
    url = f"/api/v1/conversations/{conversation.pk}/visual-world/"
    assert api.get(url).json() == {"revision": 0, "state": rules.EMPTY, "revisions": []}
    saved = api.put(url, {"revision": 0, "state": STATE}, format="json")
    assert saved.status_code == 200, saved.content
    assert saved.json()["revision"] == 1 and saved.json()["state"]["characters"]["Mira"] == MIRA
    stale = api.put(url, {"revision": 0, "state": STATE}, format="json")
    assert assert_error(stale, 409, "revision_conflict")["details"]["current_revision"] == 1
    bad = api.put(url, {"revision": 1, "state": {"scene": ["x"]}}, format="json")
    assert assert_error(bad, 422, "validation_error")["details"]["field"] == "scene"
    unknown = api.put(url, {"revision": 1, "state": {}, "extra": 1}, format="json")
    assert unknown.status_code == 400
    api.put(url, {"revision": 1, "state": {"scene": "noon"}}, format="json")
    restored = api.post(url + "restore", {"revision": 2, "to": 1}, format="json")
    assert restored.status_code == 200 and restored.json()["revision"] == 3
    missing = api.post(url + "restore", {"revision": 3, "to": 99}, format="json")
    assert missing.status_code == 404
    foreign = api_client_for(other_tenant)
    assert foreign.get(url).status_code == 404
    play_only = api_client_for(conversation.tenant, scopes=["play"])
    assert play_only.get(url).status_code == 200
    assert play_only.put(url, {"revision": 3, "state": {}}, format="json").status_code == 403


# --- the console page ----------------------------------------------------------------------


@pytest.mark.django_db
def test_the_console_page_edits_and_restores(client, operator_user, conversation):
    client.force_login(operator_user)
    url = f"/console/conversations/{conversation.pk}/visual-world/"
    assert client.get(url).status_code == 200
    client.post(url, {"revision": "0", "state": json.dumps(STATE)})
    assert world.world_of(conversation)[0] == 1
    page = client.get(url).content.decode()
    assert "grey eyes, short dark hair" in page and "oilskin coat" in page
    client.post(url, {"revision": "0", "state": "{}"})  # stale: refused, nothing changes
    client.post(url, {"revision": "1", "state": "not json"})
    assert world.world_of(conversation)[0] == 1
    client.post(url, {"revision": "1", "state": json.dumps({"scene": "noon"})})
    client.post(url, {"revision": "2", "restore": "1"})
    assert world.world_of(conversation) == (3, rules.check_state(STATE))


# --- the turn's update ---------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_turn_with_a_picture_updates_the_world_the_next_pictures_read(
    celery_worker,
    api,
    pictured,
    llm,  # noqa: F811
):
    script(llm)
    llm.enqueue(Reply(content=json.dumps(STATE)))  # the world's update, after the drawing
    reply = run(api, pictured, "Show me.", "w-1")["reply"]
    assert final(reply["id"]).status == "ready"
    for _ in range(300):
        if world.world_of(pictured)[0]:
            break
        time.sleep(0.1)
    revision, state = world.world_of(pictured)
    assert revision == 1 and state["characters"]["Mira"]["clothing"] == "oilskin coat"
    assert world.revisions(pictured)[0].source == "turn"
    script(llm)
    second = run(api, pictured, "And now?", "w-2")["reply"]
    assert final(second["id"]).status == "ready"
    producer = [r for r in llm.requests if "<visual_state>" in json.dumps(r)][-1]
    assert "oilskin coat" in json.dumps(producer)
