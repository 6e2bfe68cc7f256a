"""What a request does with the story, pure: the failure table's routes (inherit, initialise,
another character refused, rollback, reinitialise on a changed history, accept then prepare)
and the synthetic action of a continue."""

from __future__ import annotations

import pytest

from story.engine.evidence import digest
from story.engine.route import CONTINUE_TEXT, HistoryMessage, StoryRefused, decide

H = [
    HistoryMessage("a0", "assistant", "Lia stands at the gate."),
    HistoryMessage("u1", "user", "I hand her the key."),
    HistoryMessage("a1", "assistant", "She looks at the crest."),
]
PENDING = {
    "messageId": "a1",
    "userMessageId": "u1",
    "userContentHash": digest("I hand her the key."),
}


def envelope(**extra):
    return {"character": "c1", "sourceWatermark": 3, "pendingActor": PENDING, **extra}


def route(env, kind="chat", history=H, position=3, character="c1"):
    return decide(
        env,
        kind=kind,
        character_id=character,
        history=history,
        user_text="Give it back.",
        source_position=position,
    )


def test_a_normal_request_accepts_the_pending_reply_then_prepares():
    r = route(envelope())
    assert r.route == "accept_then_prepare"
    assert (
        r.action == {"type": "free", "text": "Give it back."} and r.evidence_kind == "user_action"
    )
    assert route(envelope(pendingActor=None)).route == "prepare"


@pytest.mark.parametrize("kind", ["regenerate", "edit_regenerate"])
def test_regenerations_inherit(kind):
    assert route(envelope(), kind=kind).route == "inherit"
    assert route(None, kind=kind).route == "inherit"


def test_first_request_initialises_and_another_character_is_refused():
    assert route(None).route == "initialise"
    with pytest.raises(StoryRefused):
        route(envelope(), character="c2")


def test_a_rollback_before_the_watermark():
    assert route(envelope(), position=2).route == "rollback"


@pytest.mark.parametrize(
    ("history", "why"),
    [
        (H[:2], "last reply"),
        (H + [HistoryMessage("a2", "assistant", "more")], "last reply"),
        ([H[0], HistoryMessage("u9", "user", "I hand her the key."), H[2]], "user message is not"),
        ([H[0], HistoryMessage("u1", "user", "I throw the key."), H[2]], "edited"),
        ([H[2]], "user message is not"),
    ],
)
def test_a_changed_history_reinitialises(history, why):
    r = route(envelope(), history=history)
    assert r.route == "reinitialise" and why in r.reason


def test_an_edited_reply_is_still_accepted_it_is_what_gets_settled():
    edited = H[:2] + [HistoryMessage("a1", "assistant", "She only glances at it.")]
    assert route(envelope(), history=edited).route == "accept_then_prepare"


def test_continue_is_a_synthetic_action_and_unknown_kinds_are_refused():
    r = route(envelope(), kind="continue")
    assert (
        r.action == {"type": "free", "text": CONTINUE_TEXT}
        and r.evidence_kind == "synthetic_continue"
    )
    with pytest.raises(ValueError):
        route(envelope(), kind="impersonate")


ANCHOR = {"messageId": "a0", "sha256": digest("Lia stands at the gate."), "turnId": "t0"}


@pytest.mark.parametrize("pending", [PENDING, None])
def test_the_accepted_reply_anchor_is_checked(pending):
    """The reply accepted before (``acceptedMessage``) must still be in the history with the
    text it was accepted with; an edit of it, or its loss, means the history changed."""
    env = envelope(pendingActor=pending, acceptedMessage=ANCHOR)
    assert route(env).route == ("accept_then_prepare" if pending else "prepare")
    edited = [HistoryMessage("a0", "assistant", "Lia has left the gate."), *H[1:]]
    r = route(env, history=edited)
    assert r.route == "reinitialise" and "accepted reply was edited" in r.reason
    r = route(env, history=H[1:])
    assert r.route == "reinitialise" and "accepted reply is not in the history" in r.reason
