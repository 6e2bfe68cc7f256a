"""Preparing a turn, pure: actions (free, intent, choice) and their legal targets, the Actor's
stage block free of hidden fields, determinism without dice, and a restore that replays the
mechanical decisions and refuses a tampered stage or flags."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from story.engine.goals import Goal
from story.engine.mechanics import deliver_signal
from story.engine.narrative import Narrative, StoryLine
from story.engine.policy import NarrativePolicy, WorldPolicy
from story.engine.prepare import ActionInvalid, Prepared, PreparedTampered, prepare_turn, restore
from story.engine.rng import Rng
from story.engine.stage import HEADER, render
from story.engine.world import Background, Choice, Foreground, Seed, Undercurrent, World

WP, NP = WorldPolicy(), NarrativePolicy()
HIDDEN = (
    "seedQueue",
    "rng",
    "draws",
    "stageRounds",
    "countdown",
    "owner",
    "round",
    "eventCount",
    "nextId",
)


def world():
    w = World(
        foreground=Foreground("w1", "Lia checks the copper key", phase="develop", developRounds=1),
        backgrounds=[Background("w2", "the patrol returns", "patrol", 2)],
        undercurrents=[
            Undercurrent("w3", "a courier is coming", "guild", stage=2),
            Undercurrent("w4", "the guild hunts the key", "guild", stage=1),
            Undercurrent("w5", "SECRET never surfaced", "cult", stage=1),
        ],
        seedQueue=[Seed("w6", "SEED caravan news", "caravan")],
        choices=[Choice("I wait by the gate."), Choice("I follow the courier.", isSignal=True)],
        protectedOwners=["Lia"],
        rng=Rng.seeded(731),
    )
    return w


def narrative():
    n = Narrative(
        main=StoryLine("archive", "learn what the key opens"),
        sub=StoryLine("trust", "win Lia's help"),
    )
    n.cycle.pending = [Goal("g1", "main", "reveal", "the crest is recognised")]
    return n


def prep(action, w=None, n=None, bias=None):
    return prepare_turn("t1", w or world(), n or narrative(), action, WP, NP, bias=bias)


def test_a_free_action_is_normal_and_the_stage_hides_what_the_actor_must_not_know():
    p = prep({"type": "free", "text": "I hand her the key but stay outside."})
    assert p.intent == {"kind": "normal"} and p.flags == {"interrupted": False, "switchedTo": None}
    block = render(p.projection)
    assert block.startswith(HEADER + "\n")
    body = json.loads(block[len(HEADER) + 1 :])
    assert set(body) == {"stage", "narrative"}
    assert body["stage"]["userAction"] == "I hand her the key but stay outside."
    assert body["stage"]["event"] == {"title": "Lia checks the copper key", "phase": "develop"}
    assert [h["kind"] for h in body["stage"]["hints"]] == ["sign", "atmosphere"]  # budget 2
    assert body["narrative"]["goal"]["gist"] == "the crest is recognised"
    for word in HIDDEN + ("SECRET", "SEED", "w3", "w4", "w5", "w6"):
        assert word not in block


def test_a_cue_turns_to_an_existing_event_and_interrupts_the_current_one():
    p = prep(
        {
            "type": "intent",
            "text": "I go meet the patrol.",
            "intent": {"kind": "cue", "targetId": "w2"},
        }
    )
    assert p.flags == {"interrupted": True, "switchedTo": "w2"}
    assert p.world["foreground"]["title"] == "the patrol returns"
    assert p.world["backgrounds"] == []
    assert p.projection["stage"]["event"]["phase"] == "start"


@pytest.mark.parametrize(
    "action",
    [
        {
            "type": "intent",
            "text": "x",
            "intent": {"kind": "cue", "targetId": "w4"},
        },  # stage 1: unseen
        {"type": "intent", "text": "x", "intent": {"kind": "cue", "targetId": "a new plot"}},
        {
            "type": "intent",
            "text": "x",
            "intent": {"kind": "signal", "targetId": "w3"},
        },  # not delivered
        {"type": "intent", "text": "x", "intent": {"kind": "teleport"}},
        {"type": "intent", "text": "x"},
        {"type": "choice", "index": 2},
        {"type": "choice", "index": True},
        {"type": "free"},
        {"type": "free", "text": 3},
        {"type": "shout", "text": "x"},
        None,
    ],
)
def test_actions_without_a_legal_target_are_refused(action):
    with pytest.raises(ActionInvalid):
        prep(action)


def test_choices_and_a_delivered_invitation():
    assert prep({"type": "choice", "index": 0}).intent == {"kind": "normal"}
    assert prep({"type": "choice", "index": 1}).intent == {"kind": "normal"}  # none delivered
    w = world()
    w.pendingSignalDemand = {"id": "w3", "title": "a courier is coming"}
    w.undercurrents[0].stage = 3
    w = deliver_signal(w, WP)
    p = prep({"type": "choice", "index": 1}, w)
    assert p.intent == {"kind": "signal", "targetId": "w3"}
    assert p.world["foreground"]["title"] == "a courier is coming"
    w = world()
    w.pendingInjections = [{"kind": "invitation", "id": "w9", "title": "follow the courier"}]
    p = prep(
        {"type": "intent", "text": "I follow.", "intent": {"kind": "signal", "targetId": "w9"}}, w
    )
    assert p.flags["switchedTo"] == "w9" and p.world["pendingInjections"] == []


@given(st.text(max_size=40), st.sampled_from([None, "conflict", "progress"]))
def test_preparation_is_deterministic_draws_no_dice_and_changes_nothing_given(text, bias):
    w, n = world(), narrative()
    before = (json.dumps(w.as_json()), json.dumps(n.as_json()))
    a = prep({"type": "free", "text": text}, w, n, bias)
    b = prep({"type": "free", "text": text}, w, n, bias)
    assert a == b and a.fingerprint == b.fingerprint
    assert (json.dumps(w.as_json()), json.dumps(n.as_json())) == before
    assert a.world["rng"] == w.rng.as_json()


def test_restore_replays_and_returns_the_saved_turn():
    saved = Prepared.from_json(
        json.loads(json.dumps(prep({"type": "free", "text": "hi"}, bias="conflict").as_json()))
    )
    assert restore(saved, WP, NP) == saved
    assert saved.projection["stage"]["lean"] == "conflict"


@pytest.mark.parametrize(
    "tamper",
    [
        lambda d: d["projection"]["stage"].update(invitation="a forged invitation"),
        lambda d: d["projection"]["narrative"].update(goal=None),
        lambda d: d["flags"].update(interrupted=True),
        lambda d: d.update(fingerprint="0" * 64),
        lambda d: d["world"]["foreground"].update(phase="end"),
        lambda d: d["base"]["world"].pop("rng"),
        lambda d: d.update(bias="sideways"),
    ],
)
def test_a_tampered_prepared_turn_is_refused(tamper):
    data = copy.deepcopy(prep({"type": "free", "text": "hi"}).as_json())
    tamper(data)
    with pytest.raises(PreparedTampered):
        restore(Prepared.from_json(data), WP, NP)


def test_a_scene_switch_says_whether_the_companion_follows():
    """The action reader decides whether the companion (the protected main character) goes
    along when the user turns to another scene; the stage tells the Actor."""
    stays = prep(
        {
            "type": "intent",
            "text": "I slip off to meet the patrol alone.",
            "intent": {"kind": "cue", "targetId": "w2", "companionFollows": False},
        }
    )
    assert stays.projection["stage"]["companionFollows"] is False
    follows = prep(
        {"type": "intent", "text": "We go.", "intent": {"kind": "cue", "targetId": "w2"}}
    )
    assert follows.projection["stage"]["companionFollows"] is True  # unless told otherwise
    restore(Prepared.from_json(stays.as_json()), WP, NP)  # replays to the same stage
    normal = prep({"type": "free", "text": "I wait."})
    assert "companionFollows" not in normal.projection["stage"]
    for bad in ("no", None):
        with pytest.raises(ActionInvalid):
            prep(
                {
                    "type": "intent",
                    "text": "x",
                    "intent": {"kind": "cue", "targetId": "w2", "companionFollows": bad},
                }
            )
    with pytest.raises(ActionInvalid):  # only a scene switch takes the companion anywhere
        prep({"type": "intent", "text": "x", "intent": {"kind": "normal", "companionFollows": 1}})


def test_the_emotion_guide_steers_from_the_observed_emotion_toward_the_target():
    n = narrative()
    off = prep({"type": "free", "text": "x"}, n=n).projection["narrative"]["emotionGuide"]
    assert off["enabled"] is False and off["beat"] == "hold"
    n.emotion = {
        "target": {"valence": 0.6, "arousal": 0.9, "dominance": -0.2},
        "observed": {"valence": -0.4, "arousal": 0.1, "dominance": -0.2},
        "label": "tense hope",
    }
    guide = prep({"type": "free", "text": "x"}, n=n).projection["narrative"]["emotionGuide"]
    assert guide["enabled"] is True and guide["label"] == "tense hope"
    assert set(guide) == {"enabled", "valence", "arousal", "dominance", "label", "beat"}
    # a step from what was observed toward the target, never past it
    assert -0.4 < guide["valence"] <= 0.6 and 0.1 < guide["arousal"] <= 0.9
    assert guide["dominance"] == -0.2
    assert guide["beat"] == "build"
    n.emotion["observed"] = {"valence": 0.6, "arousal": 1.0, "dominance": -0.2}
    calmer = prep({"type": "free", "text": "x"}, n=n).projection["narrative"]["emotionGuide"]
    assert calmer["beat"] == "release" and calmer["arousal"] == 0.9
