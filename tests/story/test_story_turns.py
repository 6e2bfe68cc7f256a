"""Story in real turns over the chat socket: the real ASGI app, PostgreSQL, the Redis channel
layer and the scripted OpenAI-compatible server, which answers Story's JSON-schema calls by
schema name and streams the Actor's replies."""

from __future__ import annotations

import json
from collections import defaultdict, deque

import pytest
from asgiref.sync import sync_to_async

from roleplay.llm.scripted_server import Reply
from roleplay.models import Scenario, Turn
from story.engine.tools import PURPOSES
from story.models import StoryEvent, StoryHead, StoryQuarantine, StoryRevision
from tests.ws.test_chat_socket import connect
from tests.ws.test_rewrites import send, until

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

INIT = {
    "foreground": {"title": "Lia checks the copper key at the gate"},
    "backgrounds": [
        {"title": "the patrol returns to the gate", "owner": "city watch", "countdown": 8}
    ],
    "undercurrents": [
        {"title": "a guild agent asks about the key", "owner": "the guild"},
        {"title": "the archive's seal is broken", "owner": "archivists"},
        {"title": "a smuggler hides in the cellar", "owner": "smugglers"},
    ],
    "seeds": [{"title": "a caravan brings word from outside", "owner": "merchants"}],
    "main": {
        "theme": "the old archive",
        "direction": "learn what the key opens",
        "expected": "discovery",
    },
    "sub": {"theme": "trust", "direction": "win Mira's help", "expected": "warmth"},
}
PLAN = {
    "goals": [
        {"ref": "crest", "serves": "main", "angle": "reveal", "gist": "the crest is recognised"},
        {"ref": "doubt", "serves": "main", "angle": "conflict", "gist": "the watch doubts the key"},
        {"ref": "help", "serves": "sub", "angle": "relationship", "gist": "Mira offers help"},
        {"ref": "past", "serves": "sub", "angle": "character", "gist": "Mira speaks of her past"},
        {
            "ref": "pass",
            "serves": "main",
            "angle": "reward",
            "gist": "a pass to the archive",
            "prerequisites": ["crest"],
        },
    ]
}
SETTLE = {"outcome": "settled", "completedGoals": [], "progress": {}, "direction": None}


class Script:
    """Answers by purpose: a queue per purpose (then the default answer); the Actor's
    replies from their own queue. Records the story calls' user material."""

    def __init__(self, llm) -> None:
        self.llm = llm
        self.queues: dict[str, deque] = defaultdict(deque)
        self.defaults = {
            "story_init": INIT,
            "story_action": {"kind": "normal", "targetId": None},
            "story_plan": PLAN,
            "story_advance": {"consequences": ["the key is noted"]},
            "story_settle": SETTLE,
            "story_rebranch": {"theme": "t", "direction": "d", "expected": "e", "continuity": "c"},
        }
        self.seen: dict[str, list[str]] = defaultdict(list)
        llm.default = Reply.from_callable(self.answer)

    def answer(self, request: dict) -> Reply:
        if not request.get("messages"):  # nothing a test scripted (a request cut short)
            return Reply(content="OK")
        fmt = request.get("response_format") or {}
        name = (fmt.get("json_schema") or {}).get("name")
        if name in PURPOSES:
            self.seen[name].append(request["messages"][1]["content"])
            queue = self.queues[name]
            value = queue.popleft() if queue else self.defaults[name]
            if isinstance(value, Reply):
                return value
            return Reply(content=value if isinstance(value, str) else json.dumps(value))
        queue = self.queues["actor"]
        if queue:
            return queue.popleft()
        return Reply(content="Mira turns the key over in the lamplight.", chunks=3)

    def actor(self, *replies: Reply) -> None:
        self.queues["actor"].extend(replies)

    def story(self, purpose: str, *answers) -> None:
        self.queues[purpose].extend(answers)


@pytest.fixture
def story_conversation(conversation, model_config, tenant):
    scenario = Scenario.objects.create(
        tenant=tenant,
        name="story",
        model_config=model_config,
        story_v1={"enabled": True, "modelConfigId": str(model_config.pk)},
    )
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    return conversation


async def chat(comm, text: str, client: str) -> list[dict]:
    await send(comm, type="user_message", client_message_id=client, content=text)
    return await until(comm, "turn.completed", timeout=20)


async def head_of(conversation) -> StoryHead | None:
    return await StoryHead.objects.filter(conversation=conversation).afirst()


async def story_trace(turn_id) -> dict:
    """The turn's ``story`` trace once the post-turn save recorded itself there."""
    import asyncio

    for _ in range(100):
        turn = await Turn.objects.aget(pk=turn_id)
        if "state" in turn.trace.get("story", {}):
            return turn.trace["story"]
        await asyncio.sleep(0.05)
    raise AssertionError("the post-turn save never reached the trace")


def stage_of(request: dict) -> dict | None:
    for message in request["messages"]:
        if message["role"] == "system" and "[CURRENT STORY STAGE]" in message["content"]:
            return json.loads(
                message["content"].split("[CURRENT STORY STAGE]\n", 1)[1].split("\n")[0]
            )
    return None


def actor_requests(llm) -> list[dict]:
    return [r for r in llm.requests if r.get("messages") and not r.get("response_format")]


async def test_first_turn_initialises_plans_and_gives_the_actor_a_clean_stage(
    story_conversation, llm
):
    Script(llm)
    comm = await connect(story_conversation)
    events = await chat(comm, "I hand Mira the copper key, but I stay outside.", "c1")
    assert events[-1]["type"] == "turn.completed", events[-1]
    kinds = [e["type"] for e in events]
    assert "story.preparing" in kinds
    # init, plan before the Actor (no action call: nothing to turn to yet besides the patrol)
    purposes = [
        (r.get("response_format") or {}).get("json_schema", {}).get("name", "actor")
        for r in llm.requests
    ]
    order = [purposes.index(p) for p in ("story_init", "story_action", "story_plan", "actor")]
    assert order == sorted(order)
    stage = stage_of(actor_requests(llm)[-1])
    assert stage["stage"]["event"]["title"] == INIT["foreground"]["title"]
    assert stage["stage"]["userAction"].startswith("I hand Mira")
    text = json.dumps(stage)
    for hidden in ("seed", "caravan", "countdown", "rng", "draws", '"w1"', "owner", "stageRounds"):
        assert hidden not in text, hidden
    # at most the surfacing budget of undercurrents, as hints of their kind only
    hints = stage["stage"]["hints"]
    assert len(hints) <= 2 and all(set(h) == {"kind", "text"} for h in hints)
    titles = [u["title"] for u in INIT["undercurrents"]]
    assert sum(title in text for title in titles) == len(hints)
    assert stage["narrative"]["goal"] is not None  # a goal was dealt
    updated = (await until(comm, "story.updated"))[-1]
    assert updated["outcome"] == "waiting_for_acceptance"
    head = await head_of(story_conversation)
    assert head.status == "waiting_for_acceptance" and head.revision == updated["revision"]
    pending = head.envelope["pendingActor"]
    assert pending["messageId"] == events[-1]["assistant_message_id"]
    turn = await Turn.objects.aget(pk=events[-1]["turn_id"])
    assert pending["userMessageId"] == str(turn.user_message_id)
    assert "Mira turns the key" not in json.dumps(head.envelope)  # the prose is never copied
    trace = await story_trace(turn.pk)
    assert trace["route"] == "initialise"
    assert trace["prose"] == "succeeded" and trace["state"] == "succeeded"
    await comm.disconnect()


async def test_second_turn_settles_the_edited_reply_not_the_new_input(story_conversation, llm):
    script = Script(llm)
    comm = await connect(story_conversation)
    first = await chat(comm, "I hand Mira the key.", "c1")
    await until(comm, "story.updated")
    reply_id = first[-1]["assistant_message_id"]
    await send(comm, type="edit", message_id=reply_id, content="Mira only glances at the key.")
    await until(comm, "message.updated")
    second = await chat(comm, "Give it back to me.", "c2")
    assert second[-1]["type"] == "turn.completed", second[-1]
    advance = script.seen["story_advance"][-1]
    assert "Mira only glances at the key." in advance
    assert "Give it back to me." not in advance
    head = await head_of(story_conversation)
    revisions = await sync_to_async(list)(
        StoryRevision.objects.filter(conversation=story_conversation).values_list(
            "outcome", flat=True
        )
    )
    # the acceptance was saved on its own before the Actor ran
    assert (
        list(revisions)[:3]
        == ["waiting_for_acceptance", "accepted", "waiting_for_acceptance"][: len(revisions)]
    )
    evidence = head.envelope["event"]["evidence"]
    assert [e["kind"] for e in evidence] == ["user_action", "prose"]
    assert evidence[1]["message_id"] == reply_id
    assert head.envelope["world"]["round"] == 1
    await comm.disconnect()


async def test_two_invalid_advances_fail_the_turn_and_keep_the_prepared_turn(
    story_conversation, llm
):
    script = Script(llm)
    comm = await connect(story_conversation)
    await chat(comm, "I hand Mira the key.", "c1")
    await until(comm, "story.updated")
    before = await head_of(story_conversation)
    script.story("story_advance", {"bogus": 1}, "not json")
    events = await chat(comm, "Next.", "c2")
    assert events[-1]["type"] == "error" and events[-1]["code"] == "story_settlement_pending"
    after = await head_of(story_conversation)
    assert after.revision == before.revision and after.envelope == before.envelope
    # the next request settles it
    events = await chat(comm, "Next again.", "c3")
    assert events[-1]["type"] == "turn.completed"
    await comm.disconnect()


async def test_actor_failure_then_recovery_rolls_identical_dice(story_conversation, llm):
    script = Script(llm)
    comm = await connect(story_conversation)
    await chat(comm, "I hand Mira the key.", "c1")
    await until(comm, "story.updated")
    script.actor(Reply(status=400, error_body={"error": {"message": "bad"}}))
    failed = await chat(comm, "What now?", "c2")
    assert failed[-1]["type"] == "error"
    accepted = await head_of(story_conversation)
    assert accepted.status == "ready" and accepted.envelope["pendingActor"] is None
    rng = accepted.envelope["world"]["rng"]
    stage_failed = stage_of(actor_requests(llm)[-1])
    events = await chat(comm, "What now?", "c3")
    assert events[-1]["type"] == "turn.completed"
    await until(comm, "story.updated")
    head = await head_of(story_conversation)
    assert head.envelope["world"]["rng"] == rng  # the acceptance was not redone
    assert stage_of(actor_requests(llm)[-1])["stage"]["event"] == stage_failed["stage"]["event"]
    assert len(script.seen["story_advance"]) == 1
    await comm.disconnect()


async def test_initialiser_failing_twice_runs_the_plain_actor_and_writes_nothing(
    story_conversation, llm
):
    script = Script(llm)
    script.story("story_init", {"nope": True}, {"nope": True})
    comm = await connect(story_conversation)
    events = await chat(comm, "Hello.", "c1")
    assert events[-1]["type"] == "turn.completed"
    assert (await until(comm, "story.updated"))[-1]["outcome"] == "not_written"
    assert stage_of(actor_requests(llm)[-1]) is None
    assert await head_of(story_conversation) is None
    trace = await story_trace(events[-1]["turn_id"])
    assert any("story_init_failed" in d for d in trace["diagnostics"])
    assert trace["state"] == "not_written"
    await comm.disconnect()


async def test_regenerate_inherits_the_same_stage_without_story_work(story_conversation, llm):
    script = Script(llm)
    comm = await connect(story_conversation)
    await chat(comm, "I hand Mira the key.", "c1")
    await until(comm, "story.updated")
    first_stage = stage_of(actor_requests(llm)[-1])
    story_calls = sum(len(v) for v in script.seen.values())
    revision = (await head_of(story_conversation)).revision
    await send(comm, type="regenerate", client_message_id="r1")
    events = await until(comm, "turn.completed", timeout=20)
    assert events[-1]["type"] == "turn.completed"
    assert stage_of(actor_requests(llm)[-1]) == first_stage
    assert sum(len(v) for v in script.seen.values()) == story_calls
    assert (await head_of(story_conversation)).revision == revision
    await comm.disconnect()


async def test_event_end_settles_with_evidence_and_invalid_evidence_is_repaired(
    story_conversation, llm
):
    script = Script(llm)
    # the scene ends after start → develop ×2 → end, then moves to the patrol
    comm = await connect(story_conversation)
    for n in range(4):
        await chat(comm, f"Step {n}.", f"c{n}")
        await until(comm, "story.updated")
    head = await head_of(story_conversation)
    assert head.envelope["world"]["foreground"]["phase"] == "end"
    bad = {"outcome": "settled", "completedGoals": [{"id": "g1", "evidence": ["not-a-message"]}]}
    event_id = head.envelope["event"]["id"]
    reply_ids = [
        e["message_id"] for e in head.envelope["event"]["evidence"] if e["kind"] == "prose"
    ]
    good = {
        "outcome": "settled",
        "completedGoals": [{"id": "g1", "evidence": [reply_ids[0]]}],
        "progress": {"main": {"advance": True, "evidence": [reply_ids[0]]}},
        "direction": None,
    }
    # accepting the last reply names the patrol as the next scene: the event ends there
    script.story(
        "story_advance", {"nextForeground": head.envelope["world"]["backgrounds"][0]["id"]}
    )
    script.story("story_settle", bad, good)
    await chat(comm, "Step 4.", "c4")
    await until(comm, "story.updated")
    assert len(script.seen["story_settle"]) == 2  # the invalid answer, then its repair
    event = await StoryEvent.objects.aget(conversation=story_conversation, event_id=event_id)
    assert event.status == "settled"
    head = await head_of(story_conversation)
    narrative = head.envelope["narrative"]
    assert narrative["clock"]["eventCount"] == 1 and "g1" in narrative["clock"]["completedGoals"]
    assert narrative["main"]["cursor"] == 1
    await comm.disconnect()


async def test_unsettleable_event_is_quarantined_after_three_positions(story_conversation, llm):
    script = Script(llm)
    comm = await connect(story_conversation)
    for n in range(4):
        await chat(comm, f"Step {n}.", f"c{n}")
        await until(comm, "story.updated")
    head = await head_of(story_conversation)
    script.story(
        "story_advance", {"nextForeground": head.envelope["world"]["backgrounds"][0]["id"]}
    )
    script.queues["story_settle"].extend([{"outcome": "unknown"}] * 10)
    for n in range(4, 8):
        events = await chat(comm, f"Step {n}.", f"c{n}")
        assert events[-1]["type"] == "turn.completed"
        await until(comm, "story.updated")
        trace = await story_trace(events[-1]["turn_id"])
        stage = stage_of(actor_requests(llm)[-1])
        if n in (4, 5):  # an event waits for its settlement: no goal is dealt meanwhile
            assert "dealing_paused" in trace["diagnostics"]
            assert stage["narrative"]["goal"] is None
    [record] = await sync_to_async(list)(
        StoryQuarantine.objects.filter(conversation=story_conversation)
    )
    assert record.record["type"] == "story_event_quarantine"
    assert len({a["source_position"] for a in record.record["attempts"]}) == 3
    head = await head_of(story_conversation)
    assert head.envelope["unresolved"] == []
    event = await StoryEvent.objects.aget(conversation=story_conversation, event_id=record.event_id)
    assert event.status == "quarantined"
    await comm.disconnect()


async def test_state_over_the_cap_fails_the_save_and_keeps_the_prose(
    story_conversation, llm, tenant
):
    script = Script(llm)
    scenario = await Scenario.objects.aget(pk=story_conversation.scenario_id)
    scenario.story_v1 = {**scenario.story_v1, "maxStateBytes": 4000}
    await scenario.asave(update_fields=["story_v1"])
    big = dict(INIT, seeds=[{"title": "x" * 480, "owner": f"o{i}"} for i in range(12)])
    script.story("story_init", big)
    comm = await connect(story_conversation)
    events = await chat(comm, "Hello.", "c1")
    assert events[-1]["type"] == "turn.completed" and events[-1]["content"]
    updated = (await until(comm, "story.updated"))[-1]
    assert updated["outcome"] == "failed"
    assert await head_of(story_conversation) is None
    await comm.disconnect()


async def test_rollback_restores_the_revision_at_that_position(story_conversation, llm):
    script = Script(llm)
    comm = await connect(story_conversation)
    await chat(comm, "One.", "c1")
    await until(comm, "story.updated")
    await chat(comm, "Two.", "c2")
    await until(comm, "story.updated")
    two = await head_of(story_conversation)
    last_reply = two.envelope["pendingActor"]["messageId"]
    user_two = two.envelope["pendingActor"]["userMessageId"]
    assert last_reply and user_two
    await send(comm, type="delete", message_id=user_two)  # that message and all after
    await until(comm, "messages.deleted", timeout=10)
    script.seen.clear()
    events = await chat(comm, "Two, differently.", "c3")
    assert events[-1]["type"] == "turn.completed"
    turn = await Turn.objects.aget(pk=events[-1]["turn_id"])
    assert any(d.startswith("restored_revision") for d in turn.trace["story"]["diagnostics"])
    assert "story_init" not in script.seen  # restored, not re-initialised
    await comm.disconnect()


async def test_conversations_without_story_make_no_story_calls(conversation, llm):
    comm = await connect(conversation)
    llm.enqueue(Reply(content="Plain reply.", chunks=2))
    events = await chat(comm, "Hello.", "c1")
    assert events[-1]["type"] == "turn.completed"
    assert all(not r.get("response_format") for r in llm.requests)
    assert "story.preparing" not in [e["type"] for e in events]
    turn = await Turn.objects.aget(pk=events[-1]["turn_id"])
    assert "story" not in turn.trace
    assert not await StoryHead.objects.filter(conversation=conversation).aexists()
    await comm.disconnect()


async def test_a_conflicting_save_is_rejected_and_the_prose_stays(story_conversation, llm):
    script = Script(llm)
    comm = await connect(story_conversation)
    await chat(comm, "One.", "c1")
    await until(comm, "story.updated")
    script.actor(Reply(content="A slow reply arrives.", chunks=3, delay=1.0))
    await send(comm, type="user_message", client_message_id="c2", content="Two.")
    while True:  # the story phase is done; the Actor waits
        event = (await until(comm, "phase.completed"))[-1]
        if event.get("phase") == "story":
            break
    # someone else moves the story on meanwhile
    await StoryHead.objects.filter(conversation=story_conversation).aupdate(revision=99)
    events = await until(comm, "turn.completed", timeout=20)
    assert (
        events[-1]["type"] == "turn.completed" and events[-1]["content"] == "A slow reply arrives."
    )
    updated = (await until(comm, "story.updated"))[-1]
    assert updated["outcome"] == "stale_write_rejected"
    trace = await story_trace(events[-1]["turn_id"])
    assert trace["prose"] == "succeeded" and trace["state"] == "stale_write_rejected"
    await comm.disconnect()


async def test_story_model_calls_are_recorded_with_their_purposes(story_conversation, llm):
    from roleplay.models import ModelCall

    Script(llm)
    comm = await connect(story_conversation)
    await chat(comm, "One.", "c1")
    await until(comm, "story.updated")
    await chat(comm, "Two.", "c2")
    await until(comm, "story.updated")
    purposes = await sync_to_async(set)(
        ModelCall.objects.filter(tenant_id=story_conversation.tenant_id).values_list(
            "purpose", flat=True
        )
    )
    assert {"story_init", "story_plan", "story_advance", "actor"} <= purposes
    await comm.disconnect()


async def test_a_waiting_settlement_is_retried_in_the_background(story_conversation, llm):
    from roleplay.story_plugin.services import settlements as story_settlements

    script = Script(llm)
    comm = await connect(story_conversation)
    for n in range(4):
        await chat(comm, f"Step {n}.", f"c{n}")
        await until(comm, "story.updated")
    head = await head_of(story_conversation)
    script.story(
        "story_advance", {"nextForeground": head.envelope["world"]["backgrounds"][0]["id"]}
    )
    script.story("story_settle", {"outcome": "unknown"})
    await chat(comm, "Step 4.", "c4")
    await until(comm, "story.updated")
    waiting = await head_of(story_conversation)
    [event] = waiting.envelope["unresolved"]
    assert len(event["attempts"]) == 1
    # nobody writes; the periodic task settles it (the script's default answer is valid)
    assert await sync_to_async(story_settlements.sweep)() == 1
    after = await head_of(story_conversation)
    assert after.envelope["unresolved"] == [] and after.revision == waiting.revision + 1
    row = await StoryEvent.objects.aget(conversation=story_conversation, event_id=event["id"])
    assert row.status == "settled"
    last = await StoryRevision.objects.filter(conversation=story_conversation).alast()
    assert last.outcome == "settled_in_background"
    assert await sync_to_async(story_settlements.sweep)() == 0  # nothing left to do
    await comm.disconnect()


async def test_cancel_while_the_story_prepares_writes_nothing(story_conversation, llm):
    script = Script(llm)
    script.story("story_init", Reply(content=json.dumps(INIT), delay=3.0))
    comm = await connect(story_conversation)
    await send(comm, type="user_message", client_message_id="c1", content="Hello.")
    await until(comm, "story.preparing")
    await send(comm, type="cancel")
    events = await until(comm, "turn.completed", timeout=20)
    assert events[-1]["type"] == "error" and events[-1]["code"] == "turn_cancelled"
    assert not actor_requests(llm)  # the Actor never ran
    assert await head_of(story_conversation) is None
    await comm.disconnect()


async def test_the_planner_reads_the_selected_worldbook_entries_and_revisions(
    story_conversation, character, tenant, llm
):
    from tests.ws.test_turn_worldbook import _bind

    fog = {"id": "fog", "title": "Fog", "content": "Fog rolls in every night.", "keys": ["fog"]}
    book = await sync_to_async(_bind)(tenant, character, [fog])
    script = Script(llm)
    comm = await connect(story_conversation)
    events = await chat(comm, "I walk into the fog.", "c1")
    assert events[-1]["type"] == "turn.completed"
    plan = script.seen["story_plan"][-1]
    assert "Fog rolls in every night." in plan
    assert json.dumps({"book_id": str(book.id), "revision": 1}) in plan
    await comm.disconnect()


async def test_a_story_recorded_for_another_character_is_refused(story_conversation, llm):
    Script(llm)
    comm = await connect(story_conversation)
    await chat(comm, "One.", "c1")
    await until(comm, "story.updated")
    head = await head_of(story_conversation)
    envelope = {**head.envelope, "character": "00000000-0000-0000-0000-000000000000"}
    await StoryHead.objects.filter(pk=head.pk).aupdate(envelope=envelope)
    events = await chat(comm, "Two.", "c2")
    assert events[-1]["type"] == "error"
    assert events[-1]["code"] == "story_state_other_character"
    after = await head_of(story_conversation)
    assert after.revision == head.revision  # nothing written
    await comm.disconnect()


async def test_answers_wrapped_in_a_code_fence_are_read(story_conversation, llm):
    script = Script(llm)
    script.story("story_init", "Sure! Here it is:\n```json\n" + json.dumps(INIT) + "\n```")
    comm = await connect(story_conversation)
    events = await chat(comm, "Hello.", "c1")
    assert events[-1]["type"] == "turn.completed"
    assert (await until(comm, "story.updated"))[-1]["outcome"] == "waiting_for_acceptance"
    assert stage_of(actor_requests(llm)[-1]) is not None
    await comm.disconnect()


async def test_an_acceptance_over_the_cap_keeps_the_old_state_and_the_actor_answers(
    story_conversation, llm
):
    """The cap lowered to the smallest allowed (4,000 bytes) once a story is saved, and a
    reply whose acceptance adds 2.4 KB of consequences: the acceptance saved before the Actor
    does not fit. The turn still answers, the story
    keeps its old revision and the failure is recorded; the next turn answers too."""
    script = Script(llm)
    comm = await connect(story_conversation)
    await chat(comm, "Hello.", "c1")
    assert (await until(comm, "story.updated"))[-1]["outcome"] == "waiting_for_acceptance"
    before = await head_of(story_conversation)
    scenario = await Scenario.objects.aget(pk=story_conversation.scenario_id)
    scenario.story_v1 = {**scenario.story_v1, "maxStateBytes": 4000}
    await scenario.asave(update_fields=["story_v1"])
    big = {"consequences": [f"{n} " + "x" * 470 for n in range(5)]}
    for n in (2, 3):
        script.story("story_advance", big)
        events = await chat(comm, f"Turn {n}.", f"c{n}")
        assert events[-1]["type"] == "turn.completed", events[-1]
        assert events[-1]["content"]
        updated = (await until(comm, "story.updated"))[-1]
        assert updated["outcome"] == "failed" and updated["revision"] == before.revision
        after = await head_of(story_conversation)
        assert after.revision == before.revision and after.envelope == before.envelope
        trace = await story_trace(events[-1]["turn_id"])
        assert trace["state"] == "failed" and trace["prose"] == "succeeded"
        assert any(d.startswith("story_state_too_large") for d in trace["diagnostics"])
    await comm.disconnect()


async def test_the_repair_shares_the_calls_timeout(story_conversation, llm):
    """``modelCallTimeoutMs`` bounds a tool call, its one repair included: an invalid answer
    after 0.55 s and a valid repair after 0.55 s more overrun a 1 s budget, though each
    answer alone is within it. The initialiser is unavailable: the plain Actor answers."""
    script = Script(llm)
    scenario = await Scenario.objects.aget(pk=story_conversation.scenario_id)
    scenario.story_v1 = {**scenario.story_v1, "modelCallTimeoutMs": 1000}
    await scenario.asave(update_fields=["story_v1"])
    script.story(
        "story_init",
        Reply(content=json.dumps({"nope": True}), delay=0.55),
        Reply(content=json.dumps(INIT), delay=0.55),
    )
    comm = await connect(story_conversation)
    events = await chat(comm, "Hello.", "c1")
    assert events[-1]["type"] == "turn.completed", events[-1]
    assert (await until(comm, "story.updated"))[-1]["outcome"] == "not_written"
    trace = await story_trace(events[-1]["turn_id"])
    assert "story_init_failed: model_timeout" in trace["diagnostics"]
    [call] = [c for c in trace["tools"] if c["tool"] == "story_init"]
    assert call["outcome"] == "unavailable" and call["attempts"] == 2
    assert await head_of(story_conversation) is None
    await comm.disconnect()


@pytest.mark.parametrize("status", [401, 403])
async def test_the_initialiser_does_not_swallow_authentication_or_permission_errors(
    story_conversation, llm, status
):
    """A model that refuses the credentials is not "temporarily unavailable": the turn
    fails with the model's code instead of quietly running without Story."""
    script = Script(llm)
    script.story("story_init", Reply(status=status, error_body={"error": {"message": "no access"}}))
    comm = await connect(story_conversation)
    events = await chat(comm, "Hello.", "c1")
    assert events[-1]["type"] == "error" and events[-1]["code"] == "model_auth_error"
    assert not actor_requests(llm)
    assert await head_of(story_conversation) is None
    await comm.disconnect()


async def test_an_initialiser_that_is_temporarily_unavailable_falls_back_to_the_plain_actor(
    story_conversation, llm
):
    script = Script(llm)
    script.story("story_init", *[Reply(status=503, error_body={"error": {"message": "busy"}})] * 8)
    comm = await connect(story_conversation)
    events = await chat(comm, "Hello.", "c1")
    assert events[-1]["type"] == "turn.completed", events[-1]
    trace = await story_trace(events[-1]["turn_id"])
    assert any(d.startswith("story_init_failed: model_server_error") for d in trace["diagnostics"])
    await comm.disconnect()


async def test_editing_an_accepted_message_makes_the_next_turn_read_the_story_from_before_it(
    story_conversation, llm, api
):
    """A reply accepted two turns ago (no longer the accepted anchor) is edited through the
    REST API: the next turn reads the story revision saved before that reply, so neither
    the consequence its acceptance recorded nor its old text's evidence reaches the turn."""
    script = Script(llm)
    script.story("story_advance", {"consequences": ["FACT-A1 the crest glows"]})
    comm = await connect(story_conversation)
    first = await chat(comm, "I hand Mira the key.", "c1")
    await until(comm, "story.updated")
    first_reply = first[-1]["assistant_message_id"]
    for n in (2, 3):
        await chat(comm, f"Turn {n}.", f"c{n}")
        await until(comm, "story.updated")
    assert "FACT-A1" in json.dumps(stage_of(actor_requests(llm)[-1]))  # the story carries it
    head = await head_of(story_conversation)
    assert head.envelope["acceptedMessage"]["messageId"] != first_reply
    path = f"/api/v1/conversations/{story_conversation.pk}/messages/{first_reply}/"
    response = await sync_to_async(api.patch)(
        path, {"content": "Mira refuses the key."}, format="json"
    )
    assert response.status_code == 200, response.content
    restored = await head_of(story_conversation)
    last = await StoryRevision.objects.filter(conversation=story_conversation).alast()
    assert last.outcome == "restored_after_edit" and restored.revision == last.revision
    events = await chat(comm, "Turn 4.", "c4")
    assert events[-1]["type"] == "turn.completed", events[-1]
    await until(comm, "story.updated")
    assert "FACT-A1" not in json.dumps(stage_of(actor_requests(llm)[-1]))
    after = await head_of(story_conversation)
    text = json.dumps(after.envelope)
    assert "FACT-A1" not in text and first_reply not in text
    await comm.disconnect()


async def test_editing_the_first_message_rebuilds_the_story_from_the_history(
    story_conversation, llm, api
):
    """Nothing was saved before the first user message: after its edit the story is emptied
    (its events discarded) and the next turn initialises it again from what is visible."""
    script = Script(llm)
    comm = await connect(story_conversation)
    first = await chat(comm, "I hand Mira the key.", "c1")
    await until(comm, "story.updated")
    await chat(comm, "Turn 2.", "c2")
    await until(comm, "story.updated")
    turn = await Turn.objects.aget(pk=first[-1]["turn_id"])
    path = f"/api/v1/conversations/{story_conversation.pk}/messages/{turn.user_message_id}/"
    response = await sync_to_async(api.patch)(
        path, {"content": "I keep the key to myself."}, format="json"
    )
    assert response.status_code == 200, response.content
    emptied = await head_of(story_conversation)
    assert emptied.envelope["world"] is None and emptied.envelope["nextEvent"] >= 2
    statuses = await sync_to_async(list)(
        StoryEvent.objects.filter(conversation=story_conversation).values_list("status", flat=True)
    )
    assert statuses == ["discarded"]
    script.seen.clear()
    events = await chat(comm, "Turn 3.", "c3")
    assert events[-1]["type"] == "turn.completed", events[-1]
    await until(comm, "story.updated")
    trace = await story_trace(events[-1]["turn_id"])
    assert trace["route"] == "initialise" and "story_init" in script.seen
    assert "I keep the key to myself." in script.seen["story_init"][-1]
    head = await head_of(story_conversation)
    assert head.envelope["world"] is not None and head.envelope["event"]["id"] != "e1"
    await comm.disconnect()


async def test_editing_the_reply_that_waits_for_acceptance_restores_nothing(
    story_conversation, llm, api
):
    """The pending reply is not evidence yet: its edit is what the next turn accepts."""
    Script(llm)
    comm = await connect(story_conversation)
    await chat(comm, "One.", "c1")
    await until(comm, "story.updated")
    two = await chat(comm, "Two.", "c2")
    await until(comm, "story.updated")
    before = await head_of(story_conversation)
    path = (
        f"/api/v1/conversations/{story_conversation.pk}/messages/{two[-1]['assistant_message_id']}/"
    )
    response = await sync_to_async(api.patch)(path, {"content": "Mira waits."}, format="json")
    assert response.status_code == 200, response.content
    assert (await head_of(story_conversation)).revision == before.revision
    await comm.disconnect()


def stage_message(request: dict) -> str:
    [text] = [
        m["content"]
        for m in request["messages"]
        if m["role"] == "system" and "[CURRENT STORY STAGE]" in m["content"]
    ]
    return text


async def test_the_actor_gets_the_story_writer_instructions_before_the_stage(
    story_conversation, llm, model_config
):
    """The preset's ``story_writer`` role prompt (the seed's POV writer stage instructions)
    comes before the stage: in the stable system prompt with the cache-aware layout, since
    it changes only with the preset, while the stage, which changes every turn, is sent
    after the history; a preset of its own replaces the text."""
    Script(llm)
    comm = await connect(story_conversation)
    await chat(comm, "I hand Mira the key.", "c1")
    await until(comm, "story.updated")
    request = actor_requests(llm)[-1]
    system, stage = request["messages"][0]["content"], stage_message(request)
    for rule in ("Never decide for the user", "invitation", "not happened yet", "hidden"):
        assert rule in system, rule
    assert "Never decide for the user" not in stage
    assert "The story stage that follows" in system and "{{" not in system
    assert stage.startswith("[CURRENT STORY STAGE]\n")
    preset = await sync_to_async(_preset_with_writer)(
        model_config, "WRITE AS {{getvar::characterName}}."
    )
    await chat(comm, "Next.", "c2")
    await until(comm, "story.updated")
    request = actor_requests(llm)[-1]
    assert request["messages"][0]["content"].endswith("WRITE AS Mira.")
    assert "The story stage that follows" not in request["messages"][0]["content"]
    # The stage opens the per-turn system message after the player's (nothing joined before).
    stage = stage_message(request)
    assert stage.startswith("[CURRENT STORY STAGE]\n")
    assert request["messages"][-1]["content"] == stage
    assert preset.name
    await comm.disconnect()


def _preset_with_writer(model_config, text: str):
    from roleplay.models import Preset
    from roleplay.prompting.default_preset import default_prompt_data

    prompts = [
        dict(p, content=text) if p["name"] == "story_writer" else p for p in default_prompt_data()
    ]
    preset = Preset.objects.create(tenant=model_config.tenant, name="mine", prompts=prompts)
    model_config.preset = preset
    model_config.save(update_fields=["preset"])
    return preset


async def test_the_action_reader_decides_whether_the_companion_follows(story_conversation, llm):
    script = Script(llm)
    comm = await connect(story_conversation)
    await chat(comm, "I hand Mira the key.", "c1")
    await until(comm, "story.updated")
    head = await head_of(story_conversation)
    patrol = head.envelope["world"]["backgrounds"][0]["id"]
    script.story("story_action", {"kind": "cue", "targetId": patrol, "companionFollows": False})
    await chat(comm, "I leave Mira and run to meet the patrol.", "c2")
    await until(comm, "story.updated")
    material = script.seen["story_action"][-1]
    assert "[COMPANION]\nMira" in material
    stage = stage_of(actor_requests(llm)[-1])
    assert stage["stage"]["event"]["title"] == INIT["backgrounds"][0]["title"]
    assert stage["stage"]["companionFollows"] is False
    await comm.disconnect()


async def test_the_plan_sets_the_emotion_target_the_stage_steers_toward(story_conversation, llm):
    script = Script(llm)
    target = {"valence": 0.5, "arousal": 0.8, "dominance": 0.1, "label": "wary excitement"}
    script.story("story_plan", dict(PLAN, emotion=target))
    comm = await connect(story_conversation)
    await chat(comm, "I hand Mira the key.", "c1")
    await until(comm, "story.updated")
    guide = stage_of(actor_requests(llm)[-1])["narrative"]["emotionGuide"]
    assert guide["enabled"] is True and guide["label"] == "wary excitement"
    assert guide["arousal"] > 0 and guide["beat"] == "build"
    head = await head_of(story_conversation)
    assert head.envelope["narrative"]["emotion"]["target"]["arousal"] == 0.8
    await comm.disconnect()


async def test_the_classic_layout_sends_the_instructions_right_before_the_stage(
    story_conversation, llm, model_config
):
    """Without the turnContext marker both blocks share the place after the character: the
    instructions that say "the story stage that follows" come first, the stage after."""
    Script(llm)
    await sync_to_async(_classic_preset)(model_config)
    comm = await connect(story_conversation)
    await chat(comm, "I hand Mira the key.", "c1")
    await until(comm, "story.updated")
    system = actor_requests(llm)[-1]["messages"][0]["content"]
    writer, stage = system.index("The story stage that follows"), system.index("[CURRENT STORY")
    assert writer < stage
    await comm.disconnect()


def _classic_preset(model_config):
    from roleplay.models import Preset
    from roleplay.prompting.default_preset import default_prompt_data

    preset = Preset.objects.create(
        tenant=model_config.tenant, name="classic", prompts=default_prompt_data("classic")
    )
    model_config.preset = preset
    model_config.save(update_fields=["preset"])
