"""The loop's driver over scripted ports: steps, receipts, the cap, every fallback row,
visual beats, and what the controller reads."""

from __future__ import annotations

import asyncio
import json

import pytest

from roleplay.frontloop.engine import LoopRecord, LoopSettings, run_front_loop
from roleplay.frontloop.engine.config import parse_director
from roleplay.frontloop.engine.ports import ControllerError, ScheduleReceipt, SegmentResult
from roleplay.frontloop.engine.record import SEPARATOR
from tests.frontloop.script import IMAGES, Script, call, seg

pytestmark = pytest.mark.asyncio
PLAIN = parse_director({"modelConfigId": "controller"})
GUARD = "Mira, hand the guard the key — and show me the moment"


def settings(**kw) -> LoopSettings:
    base = dict(director=IMAGES, player_input=GUARD, image_config=True)
    return LoopSettings(**(base | kw))


def stored(outcome) -> None:
    """The trace and the segments can be written to jsonb."""
    text = json.dumps(
        {"trace": list(outcome.trace), "segments": [s.to_json() for s in outcome.segments]},
        ensure_ascii=False,
    )
    text.encode("utf-8")
    assert "\\u0000" not in text


def receipt(script: Script, call_index: int, position: int = -1) -> dict:
    """The receipt the controller read at its ``call_index``-th call."""
    message = script.seen[call_index][position]
    assert message["role"] == "tool"
    return json.loads(message["content"])


async def test_the_guard_and_the_key():
    script = Script(
        [
            call("actor", {"responseMode": "complete"}, "call_a"),
            call("generate_image"),
            call("over"),
        ],
        [seg("Mira hands the guard the brass key.", 120)],
    )
    outcome = await run_front_loop(script, settings())
    assert outcome.ending == "over" and outcome.decision is None
    assert outcome.text == "Mira hands the guard the brass key."
    assert outcome.images == (0,)
    assert outcome.steps == 3 and outcome.tokens_left == 2048 - 120
    assert [c[0] for c in script.calls] == [
        "controller",
        "actor",
        "controller",
        "image",
        "controller",
    ]
    assert script.calls[0][1] == ["actor", "generate_image", "over"]
    assert script.calls[1] == ("actor", "complete", 2048)
    first = script.seen[0]
    assert [m["role"] for m in first] == ["system", "user"]
    assert "never write any text the player sees" in first[0]["content"]
    assert "- illustrate: P" in first[0]["content"]
    assert first[1]["content"] == GUARD
    after_actor = script.seen[1]
    assert after_actor[2]["tool_calls"][0]["id"] == "call_a"
    assert after_actor[2]["tool_calls"][0]["function"] == {
        "name": "actor",
        "arguments": '{"responseMode": "complete"}',
    }
    assert after_actor[3]["tool_call_id"] == "call_a"
    assert receipt(script, 1) == {
        "tool": "actor",
        "ok": True,
        "segment": 0,
        "response_mode": "complete",
        "chars": 35,
        "tokens_left": 1928,
        "steps_left": 11,
        "images_scheduled": 0,
        "text": "Mira hands the guard the brass key.",
    }
    image = receipt(script, 2)
    assert image["scheduled"] is True and image["segment"] == 0 and image["image"] == 0
    assert image["images_scheduled"] == 1
    assert script.seen[2][4]["tool_calls"][0]["id"] == "front_2"
    stored(outcome)
    assert outcome.trace[0]["event"] == "start" and outcome.trace[-1]["ending"] == "over"


async def test_segments_share_the_budget_and_join_into_one_text():
    script = Script(
        [call("actor"), call("actor"), call("over")], [seg("One.", 1500), seg("Two.", 300)]
    )
    outcome = await run_front_loop(script, settings(actor_max_tokens=2000))
    assert [c for c in script.calls if c[0] == "actor"] == [
        ("actor", "complete", 2000),
        ("actor", "complete", 500),
    ]
    assert outcome.text == "One." + SEPARATOR + "Two."
    assert [s.charged for s in outcome.segments] == [1500, 300]
    assert outcome.tokens_left == 200


async def test_a_segment_without_usage_spends_the_remainder_then_the_loop_finishes():
    script = Script([call("actor"), call("actor")], [seg("One.", None)])
    outcome = await run_front_loop(script, settings())
    assert outcome.segments[0].charged == 2048 and outcome.tokens_left == 0
    assert receipt(script, 1)["tokens_left"] == 0
    assert outcome.ending == "finish" and outcome.decision.event == "budget_exhausted"
    assert script.count("actor") == 1  # never asked for zero tokens


@pytest.mark.parametrize(("dio", "cap"), [(False, 12), (True, 13)])
async def test_the_step_cap_plus_minus_one(dio, cap):
    # cap - 1 actor steps, then over on the last step: a normal end
    script = Script([call("actor")] * (cap - 1) + [call("over")], [seg("x", 10)] * (cap - 1))
    outcome = await run_front_loop(script, settings(dio=dio))
    assert outcome.ending == "over" and outcome.steps == cap
    # cap actor steps: no further controller call, the loop finishes with what exists
    script = Script([call("actor")] * (cap + 1), [seg("x", 10)] * cap)
    outcome = await run_front_loop(script, settings(dio=dio))
    assert script.count("controller") == cap
    assert outcome.ending == "finish" and outcome.decision.event == "steps_exhausted"
    assert len(outcome.segments) == cap and outcome.steps == cap


async def test_over_before_any_actor_step_falls_back_to_direct_generation():
    script = Script([call("over")], [seg("Direct.", 90)])
    outcome = await run_front_loop(script, settings())
    assert outcome.ending == "direct_generation"
    assert outcome.decision.event == "illegal_request" and "over_before_actor" in (
        outcome.decision.reason
    )
    assert script.calls[-1] == ("actor", "complete", 2048)
    assert outcome.segments[0].direct and outcome.text == "Direct."
    assert any(e.get("rejected", {}).get("code") == "over_before_actor" for e in outcome.trace)


async def test_direct_generation_can_be_left_to_the_caller():
    script = Script([call("over")])
    outcome = await run_front_loop(script, settings(direct_on_fallback=False))
    assert outcome.ending == "direct_generation" and outcome.segments == ()
    assert script.count("actor") == 0


@pytest.mark.parametrize(
    "failure",
    [
        ControllerError("timeout", "no answer"),
        RuntimeError("boom"),
        None,
        call("draw"),
        call("actor", "{bad"),
        call("x" * 300_000),
    ],
)
async def test_controller_failure_before_any_segment_is_direct_generation(failure):
    script = Script([failure], [seg("Direct.", 50)])
    outcome = await run_front_loop(script, settings())
    assert outcome.ending == "direct_generation"
    assert outcome.text == "Direct." and script.count("actor") == 1
    stored(outcome)
    assert len(json.dumps(list(outcome.trace))) < 5_000


@pytest.mark.parametrize(
    "failure", [ControllerError("upstream_error"), RuntimeError("boom"), None, call("draw")]
)
async def test_controller_failure_after_segments_finishes_with_them(failure):
    script = Script([call("actor"), call("actor"), failure], [seg("One."), seg("Two.")])
    outcome = await run_front_loop(script, settings())
    assert outcome.ending == "finish"
    assert outcome.text == "One." + SEPARATOR + "Two." and script.count("actor") == 2


async def test_direct_generation_that_fails_propagates():
    script = Script([ControllerError("timeout")], [seg("", 0)])
    outcome = await run_front_loop(script, settings())
    assert outcome.ending == "propagate" and outcome.decision.event == "actor_empty"


@pytest.mark.parametrize(
    "failed",
    [seg("", 0), seg("  \n", 3), SegmentResult(text="", outcome="timeout"), TimeoutError()],
)
async def test_a_later_empty_or_timed_out_step_is_a_receipt_for_the_controller(failed):
    script = Script([call("actor"), call("actor"), call("over")], [seg("One.", 100), failed])
    outcome = await run_front_loop(script, settings())
    answer = receipt(script, 2)
    assert answer["ok"] is False and answer["error"] in ("actor_empty", "actor_timeout")
    assert answer["segment"] == 0
    assert outcome.ending == "over" and outcome.text == "One."


async def test_a_timeout_keeps_its_partial_text_and_spends_the_remainder():
    partial = SegmentResult(text="Two, cut", outcome="timeout", output_tokens=None)
    script = Script([call("actor"), call("actor"), call("over")], [seg("One.", 100), partial])
    outcome = await run_front_loop(script, settings())
    assert [s.complete for s in outcome.segments] == [True, False]
    assert outcome.text == "One." + SEPARATOR + "Two, cut" and outcome.tokens_left == 0
    assert receipt(script, 2)["segment"] == 1


@pytest.mark.parametrize(
    "failed",
    [
        seg("", 0),
        SegmentResult(text="", outcome="timeout"),
        TimeoutError(),
        SegmentResult(text="Half", outcome="timeout"),
    ],
)
async def test_the_first_actor_step_failing_propagates(failed):
    script = Script([call("actor")], [failed])
    outcome = await run_front_loop(script, settings())
    assert outcome.ending == "propagate"
    assert script.count("controller") == 1 and script.count("actor") == 1
    assert outcome.text in ("", "Half")  # partial text kept


async def test_an_actor_error_propagates_even_after_segments():
    error = RuntimeError("provider down")
    script = Script([call("actor"), call("actor")], [seg("One."), error])
    outcome = await run_front_loop(script, settings())
    assert outcome.ending == "propagate" and outcome.error is error
    assert outcome.decision.event == "unrecoverable" and outcome.text == "One."
    script = Script(
        [call("actor"), call("actor")],
        [seg("One."), SegmentResult("", outcome="error", error_code="bad_gateway")],
    )
    outcome = await run_front_loop(script, settings())
    assert outcome.ending == "propagate" and outcome.decision.event == "actor_error"
    assert "bad_gateway" in outcome.decision.reason


async def test_the_players_cancel_propagates_and_keeps_the_text():
    script = Script(
        [call("actor"), call("actor")], [seg("One.")], cancel=lambda s: s.count("actor") >= 1
    )
    outcome = await run_front_loop(script, settings())
    assert outcome.ending == "propagate" and outcome.decision.event == "cancelled"
    assert outcome.text == "One." and script.count("controller") == 1
    script = Script([call("actor")], cancel=lambda s: True)
    outcome = await run_front_loop(script, settings())
    assert outcome.decision.event == "cancelled" and script.calls == []


async def test_a_cancel_mid_segment_is_named_a_cancel():
    cut = SegmentResult("Half", outcome="error", error_code="cancelled")
    script = Script(
        [call("actor"), call("actor")], [seg("One."), cut], cancel=lambda s: s.count("actor") >= 2
    )
    outcome = await run_front_loop(script, settings())
    assert outcome.decision.event == "cancelled" and outcome.text == "One." + SEPARATOR + "Half"


async def test_a_cancelled_task_leaves_its_record():
    record = LoopRecord()
    script = Script([call("actor"), call("actor")], [seg("One."), asyncio.CancelledError()])
    with pytest.raises(asyncio.CancelledError):
        await run_front_loop(script, settings(), record=record)
    assert [s.text for s in record.segments] == ["One."]
    assert record.trace[0]["event"] == "start"


async def test_a_visual_beat_is_pictured_once():
    script = Script(
        [call("actor", {"responseMode": "visual_beat"}), call("generate_image"), call("over")],
        [seg("The key glints.", 80)],
    )
    outcome = await run_front_loop(script, settings())
    assert outcome.images == (0,) and script.count("image") == 1
    answer = receipt(script, 1)
    assert answer["image"]["scheduled"] is True and answer["image"]["by"] == "visual_beat"
    assert answer["images_scheduled"] == 1 and answer["steps_left"] == 10
    again = receipt(script, 2)
    assert again["scheduled"] is False and again["reason"] == "already_scheduled"
    assert outcome.steps == 4  # actor, its picture, generate_image, over


async def test_a_visual_beat_needs_a_step_left():
    # the visual beat on step 12 gets no picture; on step 11 it takes step 12
    for beat_at, pictured in ((12, ()), (11, (10,))):
        calls = [call("actor")] * (beat_at - 1) + [call("actor", {"responseMode": "visual_beat"})]
        script = Script(calls + [call("over")], [seg("x", 1)] * beat_at)
        outcome = await run_front_loop(script, settings())
        assert outcome.images == pictured
        assert outcome.ending == "finish" and outcome.steps == 12


async def test_a_cut_or_failed_visual_beat_is_not_pictured():
    cut = seg("The key gl", 50, finish_reason="length")
    script = Script([call("actor", {"responseMode": "visual_beat"}), call("over")], [cut])
    assert (await run_front_loop(script, settings())).images == ()


async def test_generate_image_before_a_segment_schedules_nothing():
    script = Script([call("generate_image"), call("actor"), call("over")], [seg()])
    outcome = await run_front_loop(script, settings())
    assert receipt(script, 1) == {
        "tool": "generate_image",
        "scheduled": False,
        "reason": "no_segment",
    }
    assert outcome.ending == "over" and outcome.images == ()


async def test_generate_image_takes_the_latest_segment():
    script = Script(
        [call("actor"), call("actor"), call("generate_image"), call("over")], [seg("A"), seg("B")]
    )
    outcome = await run_front_loop(script, settings())
    assert outcome.images == (1,)


async def test_an_image_not_accepted_may_be_asked_again_one_that_raised_may_not():
    script = Script(
        [call("actor"), call("generate_image"), call("generate_image"), call("over")],
        [seg()],
        images=[ScheduleReceipt(False, "slot_write_failed"), ScheduleReceipt(True)],
    )
    outcome = await run_front_loop(script, settings())
    assert receipt(script, 2)["reason"] == "slot_write_failed"
    assert script.count("image") == 2 and outcome.images == (0,)
    script = Script(
        [call("actor"), call("generate_image"), call("generate_image"), call("over")],
        [seg()],
        images=[RuntimeError("queue down")],
    )
    outcome = await run_front_loop(script, settings())
    assert receipt(script, 2)["reason"] == "port_error"
    assert receipt(script, 3)["reason"] == "already_scheduled"
    assert script.count("image") == 1 and outcome.ending == "over"


async def test_generate_image_not_on_the_menu_is_illegal():
    script = Script([call("actor"), call("generate_image")], [seg()])
    outcome = await run_front_loop(script, settings(image_config=False))
    assert script.calls[0][1] == ["actor", "over"]
    assert outcome.ending == "finish" and "tool_not_offered" in outcome.decision.reason


async def test_schedule_dio_once():
    script = Script(
        [call("schedule_dio"), call("schedule_dio"), call("actor"), call("over")], [seg()]
    )
    outcome = await run_front_loop(script, settings(dio=True))
    assert script.calls[0][1] == ["actor", "generate_image", "schedule_dio", "over"]
    assert receipt(script, 1) == {"tool": "schedule_dio", "accepted": True}
    assert receipt(script, 2)["reason"] == "already_scheduled"
    assert script.count("dio") == 1 and outcome.dio_scheduled


async def test_a_hostile_port_detail_is_bounded():
    detail = {"image": 3, "note": "n\x00" * 1_000, "nested": {"a": 1}, "nan": float("nan")}
    script = Script(
        [call("actor"), call("generate_image"), call("over")],
        [seg()],
        images=[ScheduleReceipt(True, None, detail)],
    )
    outcome = await run_front_loop(script, settings())
    answer = receipt(script, 2)
    assert answer["image"] == 3 and len(answer["note"]) == 200
    assert "nested" not in answer and "nan" not in answer
    stored(outcome)


async def test_skills_and_hostile_player_input_reach_the_controller_safely():
    outcome_script = Script([call("actor"), call("over")], [seg()])
    await run_front_loop(outcome_script, settings(director=PLAIN, player_input="a\ud800\x00b"))
    first = outcome_script.seen[0]
    assert first[0]["content"].endswith("to keep what was already written.\n")
    json.dumps(first, ensure_ascii=False).encode("utf-8")
