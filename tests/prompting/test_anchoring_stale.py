"""Append-only per-turn context (``prompting.anchoring``): text once placed after a stored
message stays there while that message holds, even when it is no longer current (stale),
so a changed or retired block anchored back in the history no longer breaks the prompt
where it stood; the new version goes to the marker, labelled; stale text is bounded and
goes when the prompt breaks anyway (a cut when the window is full, an edit)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from console.tokens import count_messages
from roleplay.prompting import trimming
from roleplay.prompting.anchoring import STALE_PREFIX, UPDATED, anchor, digest, fingerprint
from roleplay.prompting.assembly import ActorInputs, assemble
from roleplay.prompting.placement import Block
from tests.prompting.test_anchoring import CHAT, LORE, assembled, chats, following
from tests.prompting.test_cache_layout import CACHE_AWARE, CARD, NOW, words


def _three_turns(chat, reply, said, changed, retired, *, limit=100_000):
    """Turn 1 sends the blocks at the marker, turn 2 (nothing changed) anchors them after
    turn 1's input, turn 3 changes some and no longer has others."""
    first = assembled(CACHE_AWARE, chat, limit=limit)
    second_chat = following(chat, reply, said, set())
    second = assembled(CACHE_AWARE, second_chat, anchors=first.anchors, limit=limit)
    third_chat = following(second_chat, reply, said, changed)
    third_chat["blocks"] = [b for b in third_chat["blocks"] if b["id"] not in retired]
    third = assembled(CACHE_AWARE, third_chat, anchors=second.anchors, limit=limit)
    return second, third_chat, third


@settings(max_examples=60, deadline=None)
@given(chats(), words, words, st.data())
def test_changed_or_retired_blocks_leave_their_earlier_text_where_it_stood(chat, reply, said, data):
    ids = [b["id"] for b in chat["blocks"]]
    changed = set(data.draw(st.lists(st.sampled_from(ids), unique=True)))
    retired = set(data.draw(st.lists(st.sampled_from(ids), unique=True))) - changed
    second, third_chat, third = _three_turns(chat, reply, said, changed, retired)
    # Nothing of the earlier request moved: the next one starts with all of it.
    assert third.messages[: len(second.messages)] == second.messages
    stale = {key.partition(":")[2] for key in third.anchors if key.startswith(STALE_PREFIX)}
    assert stale == changed | retired
    marker = third.messages[-1]["content"] if changed else ""
    for block in third_chat["blocks"]:
        if block["id"] in changed:  # the new version at the marker, labelled as current
            assert f"{UPDATED}\n{block['content']}" in marker
        else:
            assert block["content"] in str(third.messages[: len(second.messages)])


def test_the_turn_before_s_marker_keeps_no_stale_text():
    """Right before the reply, a changed block's old text costs nothing to drop: the server
    reads the reply and what follows anew anyway. So only places further back keep it."""
    first = assembled(CACHE_AWARE, CHAT)
    later = following(CHAT, "Fine.", "Next.", {"lore"})
    second = assembled(CACHE_AWARE, later, anchors=first.anchors)
    assert not any(key.startswith(STALE_PREFIX) for key in second.anchors)
    assert second.messages[-1]["content"] == LORE + " (changed)"
    assert str(second.messages).count("Lore 8") == 1


HISTORY = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(10)]


def _placed(ident: str, text: str, after: int) -> list:
    return [digest(text), after, fingerprint(HISTORY, after), 0, text]


def test_stale_text_is_kept_oldest_first_within_its_budget():
    previous = {"a": _placed("a", "old a" * 10, 3), "b": _placed("b", "old b" * 10, 5)}
    blocks = [Block(id="a", position="after_character", content="new a"),
              Block(id="b", position="after_character", content="new b")]  # fmt: skip
    roomy = anchor(blocks, previous, HISTORY, stale_budget=100)
    assert {f"{STALE_PREFIX}3:a", f"{STALE_PREFIX}5:b"} <= set(roomy.anchors)
    assert roomy.stale == 100
    tight = anchor(blocks, previous, HISTORY, stale_budget=60)
    # The second place does not fit: it is rebuilt (the prompt breaks there), the first stays.
    assert f"{STALE_PREFIX}3:a" in tight.anchors and f"{STALE_PREFIX}5:b" not in tight.anchors
    assert [b.depth for b in tight.anchored] == [7]
    assert [b.content for b in tight.fresh] == [f"{UPDATED}\nnew a", "new b"]
    none = anchor(blocks, previous, HISTORY, stale_budget=0)
    assert none.anchored == [] and none.stale == 0


def test_stale_text_goes_when_the_prompt_breaks_before_it_anyway():
    previous = {
        "a": _placed("a", "old a", 5),
        trimming.KEY: trimming.mark(HISTORY, 0),  # the history started at its first message
    }
    blocks = [Block(id="a", position="after_character", content="new a")]
    kept = anchor(blocks, previous, HISTORY, stale_budget=100)
    assert kept.stale > 0
    cut = anchor(blocks, previous, HISTORY, kept_from=2, stale_budget=100)  # a history cut
    assert cut.stale == 0 and cut.anchored == []
    edited = [*HISTORY[:4], {"role": "user", "content": "edited"}, *HISTORY[5:]]
    assert anchor(blocks, previous, edited, stale_budget=100).stale == 0


def test_when_the_window_is_full_the_stale_text_goes_with_the_first_cut():
    """A cut breaks the prompt at the history's start anyway: the stale text goes with it
    (one break, not two), and the cut counts what that frees."""
    roomy = _three_turns(CHAT, "Fine.", "Next.", {"lore"}, set())[2]
    assert roomy.anchors.keys() & {f"{STALE_PREFIX}23:lore"}
    limit = roomy.prompt_tokens - 1 + 64 + 64  # one token short, plus output and margin
    full = _three_turns(CHAT, "Fine.", "Next.", {"lore"}, set(), limit=limit)[2]
    assert 0 < full.dropped_history < len(CHAT["history"])
    assert full.prompt_tokens <= full.budget
    assert not any(key.startswith(STALE_PREFIX) for key in full.anchors)
    assert str(full.messages).count("Lore 8") == 1  # the new version alone, at the marker


def test_anchors_written_before_append_only_are_read():
    """Three items (no order, no text): the block stays if unchanged, but its text cannot be
    kept stale, so a change rebuilds its place as before."""
    inputs = dict(card=CARD, persona_name="Ann", now=NOW, seed="t")
    history = [*CHAT["history"], {"role": "user", "content": CHAT["input"]},
               {"role": "assistant", "content": "Fine."}]  # fmt: skip
    old = {"lore": [digest(LORE), 23, fingerprint(history, 23)]}
    for blocks, stays in ((CHAT["blocks"], True), ([{**CHAT["blocks"][0], "content": "x"}], False)):
        prompt = assemble(
            CACHE_AWARE,
            ActorInputs(history=history, user_input="Next.", blocks=blocks, anchors=old, **inputs),
            count_messages=count_messages,
            context_limit=100_000,
            max_output_tokens=64,
        )
        assert (prompt.anchors["lore"][1] == 23) == stays
        assert not any(key.startswith(STALE_PREFIX) for key in prompt.anchors)
