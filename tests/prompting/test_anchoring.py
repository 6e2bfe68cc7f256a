"""Per-turn blocks that did not change stay where the turn before sent them
(``prompting.anchoring``), pinned over random conversations: with nothing changed the next
request starts with the whole earlier one; with some blocks changed only
those move to the marker; the order never depends on the order blocks came in; an anchor
that no longer holds (its message edited or trimmed away, too deep, the classic layout)
gives the block back to the marker; and no anchors value, however malformed, breaks an
assembly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from console.tokens import count_messages
from roleplay.prompting import anchoring
from roleplay.prompting.assembly import ActorInputs, assemble
from tests.prompting.test_cache_layout import (
    CACHE_AWARE,
    CARD,
    CLASSIC,
    NOW,
    conversations,
    words,
)


def _all_per_turn(chat: dict) -> dict:
    return {**chat, "blocks": [{**b, "per_turn": True} for b in chat["blocks"]]}


# The cache layout's random conversations, with at least one block, every block per turn.
chats = lambda: conversations().filter(lambda c: c["blocks"]).map(_all_per_turn)  # noqa: E731


def assembled(preset, chat, *, anchors=None, limit=100_000):
    inputs = ActorInputs(
        card=CARD,
        persona_name="Ann",
        history=chat["history"],
        user_input=chat["input"],
        blocks=chat["blocks"],
        player_messages=1 + len(chat["history"]) // 2,
        now=NOW,
        seed="turn",
        anchors=anchors,
    )
    return assemble(
        preset, inputs, count_messages=count_messages, context_limit=limit, max_output_tokens=64
    )


def following(chat: dict, reply: str, said: str, changed: set[str]) -> dict:
    history = [
        *chat["history"],
        {"role": "user", "content": chat["input"]},
        {"role": "assistant", "content": reply},
    ]
    blocks = [
        {**b, "content": b["content"] + " (changed)"} if b["id"] in changed else b
        for b in chat["blocks"]
    ]
    return {"history": history, "blocks": blocks, "input": said}


def whole_messages_shared(earlier: list[dict], later: list[dict]) -> int:
    return next(
        (i for i, (a, b) in enumerate(zip(earlier, later, strict=False)) if a != b), len(earlier)
    )


@settings(max_examples=60, deadline=None)
@given(chats(), words, words)
def test_with_nothing_changed_the_next_request_starts_with_the_whole_earlier_one(chat, reply, said):
    first = assembled(CACHE_AWARE, chat)
    second = assembled(CACHE_AWARE, following(chat, reply, said, set()), anchors=first.anchors)
    # Everything, the earlier input included: the blocks stayed where they were.
    assert whole_messages_shared(first.messages, second.messages) == len(first.messages)
    # And a third turn keeps them there too.
    third_chat = following(following(chat, reply, said, set()), reply, said, set())
    third = assembled(CACHE_AWARE, third_chat, anchors=second.anchors)
    assert whole_messages_shared(second.messages, third.messages) == len(second.messages)
    assert all(b["content"] in str(third.messages) for b in chat["blocks"])


@settings(max_examples=60, deadline=None)
@given(chats(), words, words, st.data())
def test_only_the_changed_blocks_move_to_the_marker(chat, reply, said, data):
    ids = [b["id"] for b in chat["blocks"]]
    changed = set(data.draw(st.lists(st.sampled_from(ids), unique=True)))
    first = assembled(CACHE_AWARE, chat)
    later_chat = following(chat, reply, said, changed)
    second = assembled(CACHE_AWARE, later_chat, anchors=first.anchors)
    # The guaranteed part (up to the end of the earlier history) is shared, as ever.
    history_end = max(
        (i for i, part in enumerate(first.parts) if part.source in ("history", "greeting")),
        default=0,
    )
    assert second.messages[: history_end + 1] == first.messages[: history_end + 1]
    marker = second.messages[-1]["content"] if changed else ""
    for block in later_chat["blocks"]:
        assert block["content"] in str(second.messages)  # nothing is ever lost
        at_marker = block["content"] in marker
        assert at_marker == (block["id"] in changed)
    # Every block appears once.
    text = "\n".join(str(m["content"]) for m in second.messages)
    for block in later_chat["blocks"]:
        assert text.count(block["content"]) == 1


@settings(max_examples=40, deadline=None)
@given(chats(), words, words, st.randoms(use_true_random=False))
def test_the_order_blocks_come_in_changes_nothing(chat, reply, said, rnd):
    first = assembled(CACHE_AWARE, chat)
    later_chat = following(chat, reply, said, {chat["blocks"][0]["id"]})
    shuffled = dict(later_chat, blocks=rnd.sample(later_chat["blocks"], len(later_chat["blocks"])))
    a = assembled(CACHE_AWARE, later_chat, anchors=first.anchors)
    b = assembled(CACHE_AWARE, shuffled, anchors=first.anchors)
    assert a.messages == b.messages and a.anchors == b.anchors


@settings(max_examples=60, deadline=None)
@given(chats(), st.lists(st.tuples(words, words), min_size=1, max_size=10))
def test_a_block_stays_until_it_is_too_deep_and_the_copy_it_leaves_stays_too(chat, exchanges):
    """A block that did not change stays where it was while it is at most ``MAX_DEPTH``
    stored messages from the end; deeper, it is sent again at the marker, and its earlier
    copy stays where it stood: each request starts with the whole request before it."""
    prompt = assembled(CACHE_AWARE, chat)
    for reply, said in exchanges:
        chat = following(chat, reply, said, set())
        earlier, prompt = prompt, assembled(CACHE_AWARE, chat, anchors=prompt.anchors)
        assert prompt.messages[: len(earlier.messages)] == earlier.messages
        history = chat["history"]
        for block in chat["blocks"]:
            _digest, after, _mark, *_ = prompt.anchors[block["id"]]
            assert len(history) - after <= anchoring.MAX_DEPTH
            if after == len(history) + 1:  # sent at the marker this turn
                assert block["content"] in prompt.messages[-1]["content"]


def _two_turns(chat, reply="Fine.", said="Next."):
    first = assembled(CACHE_AWARE, chat)
    return first, following(chat, reply, said, set())


LORE = "Lore 8: " + "the lamp must never go out. " * 8  # longer than an exchange
LEAD = [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i} " + "words " * 15}
    for i in range(20)
]  # a conversation of some length before the exchange the tests play
CHAT = {
    "history": [
        *LEAD,
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi"},
    ],
    "blocks": [{"id": "lore", "position": "after_character", "content": LORE, "per_turn": True}],
    "input": "The lamp?",
}


def test_an_edited_message_before_the_block_gives_it_back_to_the_marker():
    first, later = _two_turns(CHAT)
    kept = assembled(CACHE_AWARE, later, anchors=first.anchors)
    assert kept.messages[-1]["content"] != LORE  # anchored: no longer at the marker
    # the message the block followed (the player's "The lamp?") is edited
    history = list(later["history"])
    history[22] = {"role": "user", "content": "The lamp!"}
    edited = dict(later, history=history)
    moved = assembled(CACHE_AWARE, edited, anchors=first.anchors)
    assert moved.messages[-1] == {"role": "system", "content": LORE}


def test_a_block_too_deep_goes_back_to_the_marker():
    first, later = _two_turns(CHAT)
    deep = dict(later)
    for i in range(anchoring.MAX_DEPTH // 2):
        deep = following(deep, f"r{i}", f"s{i}", set())
    prompt = assembled(CACHE_AWARE, deep, anchors=first.anchors)
    assert prompt.messages[-1] == {"role": "system", "content": LORE}
    anchor = prompt.anchors["lore"]
    assert anchor[1] == len(deep["history"]) + 1  # anchored anew after the new input


def test_a_trimmed_anchor_and_the_classic_layout_anchor_nothing():
    first, later = _two_turns(CHAT)
    for i in range(3):
        later = following(later, "x " * 200, f"s{i}", set())
    trimmed = assembled(CACHE_AWARE, later, anchors=first.anchors, limit=700)
    assert trimmed.dropped_history >= 23
    assert trimmed.messages[-1] == {"role": "system", "content": LORE}
    classic = assembled(CLASSIC, later, anchors=first.anchors)
    assert classic.anchors == {}


anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["lore", "other", "", "~23:lore", "~", "~x:"]), anything))
def test_malformed_anchors_never_break_an_assembly(anchors):
    _first, later = _two_turns(CHAT)
    prompt = assembled(CACHE_AWARE, later, anchors=anchors)
    assert LORE in str(prompt.messages)
    assert prompt.anchors["lore"][1] in (0, 1, 2, len(later["history"]) + 1)
