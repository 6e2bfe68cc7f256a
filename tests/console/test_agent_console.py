"""Console pages of a conversation's Agent V2: the state in force by its sections, the
revisions with their diffs, the ledger by type, the planning runs and one run in full.
Operators restore a revision (a new revision, by compare-and-set on the head the page
showed); viewers read only; another tenant's conversation or run is a 404."""

from __future__ import annotations

import uuid

import pytest

from memory import services as message_store
from roleplay.agentic.engine.ledger import entry_for
from roleplay.agentic.services import agent_state
from roleplay.models import AgentStateRevision, Conversation, ModelCall, PlanningRun, Turn
from roleplay.prompting.director_state import (
    DIRECTOR_STATE_HEADER,
    DIRECTOR_STATE_SECTIONS,
    split_sections,
)
from roleplay.scenarios.services import create_scenario

pytestmark = pytest.mark.django_db


def _state(**notes) -> str:
    """A valid state text: the header, then every section (``scene`` sets the first)."""
    lines = [DIRECTOR_STATE_HEADER]
    for label in DIRECTOR_STATE_SECTIONS:
        text = notes.get("scene") if label == "Current scene" else None
        lines.append(f"{label}: {text or f'notes on {label.lower()}'}")
    return "\n".join(lines)


def _url(conversation, tail: str = "") -> str:
    return f"/console/conversations/{conversation.pk}/agent/{tail}"


def _scenario_for(conversation, *, name="Harbor"):
    config = conversation.model_config or _config(conversation)
    ref = config.name
    agentic = {
        "modelConfigs": {
            "actor": ref,
            "orchestrator": ref,
            "director": ref,
            "specialists": {"analyze_plot": ref, "judge_npc": ref},
        },
        "enabledTools": ["update_director_state", "analyze_plot", "judge_npc"],
    }
    scenario = create_scenario(
        conversation.tenant, name=name, model_config=config, agenticV2=agentic
    )
    Conversation.objects.filter(pk=conversation.pk).update(scenario=scenario)
    conversation.scenario = scenario
    return scenario


def _config(conversation):
    from roleplay.models import ModelConfig

    return ModelConfig.objects.filter(tenant=conversation.tenant).order_by("name").first()


def _commit(conversation, scenario, state, *, head, turn=1, tools=(), entries=(), message=None):
    return agent_state.commit(
        conversation,
        scenario,
        expected_head=head,
        state=state,
        tools_called=list(tools),
        source_turn=turn,
        source_message_id=message,
        ledger_entries=list(entries),
    )


@pytest.fixture
def scenario(conversation):
    return _scenario_for(conversation)


@pytest.fixture
def two_revisions(conversation, scenario, tenant):
    reply = message_store.save_message(
        tenant, conversation.session_id, role="assistant", content="The gate creaks."
    )
    _commit(conversation, scenario, _state(scene="At the harbor gate."), head=0, message=reply.id)
    _commit(
        conversation,
        scenario,
        _state(scene="Inside the lighthouse, at night."),
        head=1,
        turn=2,
        tools=["analyze_plot", "update_director_state"],
        entries=[
            entry_for("analyze_plot", 2, "The keeper hides a letter.", "open the door"),
            entry_for("judge_npc", 2, "The guard distrusts strangers.", "open the door"),
        ],
    )
    return scenario


def _turn(conversation, label="t1"):
    return Turn.objects.create(
        tenant=conversation.tenant,
        conversation=conversation,
        client_message_id=label,
        assistant_message_id=uuid.uuid4(),
        status="complete",
    )


def _run(conversation, scenario, turn, **fields):
    return PlanningRun.objects.create(
        tenant=conversation.tenant,
        turn=turn,
        conversation=conversation,
        scenario=scenario,
        assistant_message_id=turn.assistant_message_id,
        source_turn=2,
        **fields,
    )


# --- the state, its revisions and the ledger --------------------------------------------


def test_split_sections_reads_labels_and_keeps_the_rest_raw():
    text = "preamble\n" + _state(scene="Dock.\nFog rolls in.")
    pairs = split_sections(text)
    assert pairs[0] == (None, f"preamble\n{DIRECTOR_STATE_HEADER}")
    assert pairs[1] == ("Current scene", "Dock.\nFog rolls in.")
    assert [label for label, _ in pairs[1:]] == list(DIRECTOR_STATE_SECTIONS)
    assert split_sections("no labels here") == [(None, "no labels here")]
    assert split_sections("") == [] and split_sections(None) == []


def test_the_page_shows_the_state_by_section_and_each_revision_diff(
    operator_client, conversation, two_revisions
):
    detail = operator_client.get(f"/console/conversations/{conversation.pk}/").content.decode()
    assert f'href="{_url(conversation)}"' in detail  # linked from the transcript page
    response = operator_client.get(_url(conversation))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Harbor" in html and 'class="badge ok">on<' in html
    assert '<pre class="state-raw">[Agentic RP State]</pre>' in html
    assert '<h3 class="state-label">Current scene</h3>' in html
    assert '<pre class="state-notes">Inside the lighthouse, at night.</pre>' in html
    for label in DIRECTOR_STATE_SECTIONS:
        assert f'<h3 class="state-label">{label}</h3>' in html.replace("&#x27;", "'")
    assert 'id="revision-2"' in html and 'id="revision-1"' in html
    assert html.index('id="revision-2"') < html.index('id="revision-1"')  # newest first
    assert '<pre class="diff-line del">- Current scene: At the harbor gate.</pre>' in html
    assert (
        '<pre class="diff-line add">+ Current scene: Inside the lighthouse, at night.</pre>' in html
    )
    assert "analyze_plot, update_director_state" in html  # revision 2's tools
    # One Restore form, for revision 1: revision 2 is the one in force.
    assert html.count('class="inline restore-form"') == 1
    assert 'name="expected_head" value="2"' in html


def test_the_ledger_filters_by_type(viewer_client, conversation, two_revisions):
    everything = viewer_client.get(_url(conversation)).content.decode()
    assert "The keeper hides a letter." in everything
    assert "The guard distrusts strangers." in everything
    npc = viewer_client.get(_url(conversation), {"type": "npc"}).content.decode()
    assert "The guard distrusts strangers." in npc
    assert "The keeper hides a letter." not in npc
    event = viewer_client.get(_url(conversation), {"type": "event"}).content.decode()
    assert "The keeper hides a letter." in event and "distrusts" not in event
    camera = viewer_client.get(_url(conversation), {"type": "camera"}).content.decode()
    assert "No ledger entries of type camera." in camera


@pytest.mark.parametrize("bad", ["bogus", "EVENT", "x" * 5000, "npc\x00", "<script>"])
def test_an_unknown_ledger_type_is_ignored_not_an_error(
    viewer_client, conversation, two_revisions, bad
):
    response = viewer_client.get(_url(conversation), {"type": bad})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="ledger-unknown-type"' in html
    assert "The keeper hides a letter." in html and "The guard distrusts strangers." in html
    assert "<script>" not in html.split('id="ledger-unknown-type"')[1][:200]


def test_a_conversation_without_a_scenario_says_so(viewer_client, conversation):
    response = viewer_client.get(_url(conversation))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="agent-no-scenario"' in html and "has no run mode" in html
    assert 'href="/console/scenarios/new/?template=continuity"' in html  # how to turn it on
    assert 'id="agent-state"' not in html and "No planning runs yet." in html


def test_a_scenario_without_agent_v2_says_it_is_off(viewer_client, conversation, tenant):
    from roleplay.models import Scenario

    plain = Scenario.objects.create(tenant=tenant, name="Plain")
    Conversation.objects.filter(pk=conversation.pk).update(scenario=plain)
    html = viewer_client.get(_url(conversation)).content.decode()
    assert 'id="agent-off-note"' in html and "No state yet" in html


# --- restoring ----------------------------------------------------------------------------


def _restore(client, conversation, revision, head):
    return client.post(
        _url(conversation, "restore/"), {"revision": revision, "expected_head": head}
    )


def _revisions(conversation):
    return list(
        AgentStateRevision.objects.filter(conversation=conversation)
        .order_by("revision")
        .values_list("revision", "origin", "state")
    )


def test_an_operator_restores_a_revision_as_a_new_one(operator_client, conversation, two_revisions):
    response = _restore(operator_client, conversation, 1, 2)
    assert response.status_code == 302 and response["Location"] == _url(conversation)
    revisions = _revisions(conversation)
    assert [(r, o) for r, o, _ in revisions] == [(1, "director"), (2, "director"), (3, "restore")]
    assert revisions[2][2] == revisions[0][2]
    assert agent_state.read_state(conversation, two_revisions).state == revisions[0][2]
    page = operator_client.get(_url(conversation)).content.decode()
    assert "Revision 1 restored as revision 3." in page
    assert '<pre class="state-notes">At the harbor gate.</pre>' in page


def test_a_stale_restore_says_so_and_writes_nothing(operator_client, conversation, two_revisions):
    before = _revisions(conversation)
    response = _restore(operator_client, conversation, 1, 1)  # the page showed head 1
    assert response.status_code == 302
    assert _revisions(conversation) == before
    page = operator_client.get(_url(conversation)).content.decode()
    assert "the state moved on since this page was shown (from revision 1 to 2)" in page


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ({"revision": 9, "expected_head": 2}, "there is no state revision 9"),
        ({"revision": "one", "expected_head": 2}, "did not say which revision"),
        ({"revision": 1}, "did not say which revision"),
        ({"revision": 2**40, "expected_head": 2}, "did not say which revision"),
        ({}, "did not say which revision"),
    ],
)
def test_a_bad_restore_is_a_message_not_an_error(
    operator_client, conversation, two_revisions, body, shown
):
    before = _revisions(conversation)
    response = operator_client.post(_url(conversation, "restore/"), body, follow=True)
    assert response.status_code == 200
    assert shown in response.content.decode()
    assert _revisions(conversation) == before


def test_a_restore_without_a_scenario_is_refused(operator_client, conversation):
    response = _restore(operator_client, conversation, 1, 0)
    assert response.status_code == 302
    assert not AgentStateRevision.objects.exists()


def test_a_viewer_cannot_restore(viewer_client, conversation, two_revisions):
    page = viewer_client.get(_url(conversation)).content.decode()
    assert "restore-form" not in page  # no button either
    before = _revisions(conversation)
    assert _restore(viewer_client, conversation, 1, 2).status_code == 403
    assert _revisions(conversation) == before


def test_restore_takes_only_a_post(operator_client, conversation, two_revisions):
    assert operator_client.get(_url(conversation, "restore/")).status_code == 405


# --- planning runs ------------------------------------------------------------------------


def test_the_runs_list_and_a_run_in_full(operator_client, conversation, scenario, foreign):
    turn = _turn(conversation)
    mine = ModelCall.objects.create(
        tenant=conversation.tenant, purpose="agentic.director", model="scripted-model",
        input_tokens=120, output_tokens=40, total_tokens=160, latency_ms=812.5, outcome="ok",
    )  # fmt: skip
    theirs = ModelCall.objects.create(
        tenant=foreign["conversation"].tenant, purpose="zz-their-call", model="their-model",
        outcome="ok",
    )  # fmt: skip
    _run(
        conversation,
        scenario,
        turn,
        status="done",
        outcome="updated",
        error_code="",
        revision=1,
        deliveries=2,
        snapshot={"revision": 0, "head": 0, "guidance": "Keep the fog thick.", "config": {}},
        tools_requested=["analyze_plot", "judge_npc"],
        tools_run=["analyze_plot"],
        specialists=[
            {
                "tool": "analyze_plot",
                "reason": "a letter appeared",
                "focus": "the letter",
                "forced": False,
                "status": "ok",
                "text": "Plot: the letter matters.",
                "usage": {"input_tokens": 50, "output_tokens": 9, "total_tokens": 59},
                "ms": 321.0,
            },
            {
                "tool": "judge_npc",
                "reason": "the guard reacts",
                "focus": "",
                "forced": True,
                "status": "failed",
                "text": "",
                "error": "timeout",
                "ms": 5000.0,
            },
        ],  # fmt: skip
        director={
            "reason": "write the state",
            "attempts": [
                {"verdict": "too_long", "message": "over the limit", "chars": 9000},
                {"verdict": "ok", "message": "", "chars": 800},
            ],
            "forced": ["judge_npc"],
            "escalated": False,
        },
        ignored_calls=[{"id": "c9", "name": "fly_away", "why": "unknown_tool"}],
        timings={"phase1_ms": 10.5, "total_ms": 6000.0, "model_ms": 5500.0, "odd_ms": 1},
        model_calls=[str(mine.pk), str(theirs.pk), "not-a-number"],
    )
    other = _run(conversation, scenario, _turn(conversation, "t2"), status="queued")
    listing = operator_client.get(_url(conversation)).content.decode()
    assert listing.index(f'id="run-{other.turn_id}"') < listing.index(f'id="run-{turn.pk}"')
    assert f'href="{_url(conversation, f"runs/{turn.pk}/")}"' in listing
    assert "requested: analyze_plot, judge_npc" in listing and "run: analyze_plot" in listing
    assert "total 6000.0 · model 5500.0" in listing and "wrote revision 1" in listing

    response = operator_client.get(_url(conversation, f"runs/{turn.pk}/"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Plot: the letter matters." in html and "a letter appeared" in html
    assert '<p class="error specialist-error">timeout</p>' in html
    assert "tokens 50 in / 9 out" in html and "forced" in html
    assert "too_long" in html and "over the limit" in html and "9000" in html
    assert "unknown_tool" in html and "fly_away" in html
    assert "<td>phase1_ms</td>" in html and "<td>odd_ms</td>" in html
    assert "agentic.director" in html and "120 / 40 / 160" in html and "812.5" in html
    assert "zz-their-call" not in html  # another tenant's call is never shown
    assert '<pre id="run-guidance">Keep the fog thick.</pre>' in html


def test_a_run_with_nothing_recorded_renders(viewer_client, conversation, scenario):
    turn = _turn(conversation)
    _run(conversation, scenario, turn, snapshot={}, director={}, timings={})
    html = viewer_client.get(_url(conversation, f"runs/{turn.pk}/")).content.decode()
    assert "No specialist ran." in html and "Nothing recorded of the Director." in html
    assert "No model calls recorded." in html


# --- tenancy ------------------------------------------------------------------------------


def test_another_tenants_conversation_and_run_are_not_found(
    operator_client, conversation, scenario, foreign, other_tenant
):
    theirs = foreign["conversation"]
    their_scenario = _scenario_for(theirs, name="Theirs")
    _commit(theirs, their_scenario, _state(), head=0)
    their_turn = _turn(theirs)
    _run(theirs, their_scenario, their_turn)
    before = _revisions(theirs)
    assert operator_client.get(_url(theirs)).status_code == 404
    assert operator_client.get(_url(theirs, f"runs/{their_turn.pk}/")).status_code == 404
    assert _restore(operator_client, theirs, 1, 1).status_code == 404
    assert _revisions(theirs) == before
    # Their turn under my conversation, and an unknown turn: not found either.
    assert operator_client.get(_url(conversation, f"runs/{their_turn.pk}/")).status_code == 404
    assert operator_client.get(_url(conversation, f"runs/{uuid.uuid4()}/")).status_code == 404
    assert operator_client.get(_url(conversation, "runs/not-a-uuid/")).status_code == 404
