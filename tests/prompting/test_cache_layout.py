"""The cache-aware layout (the shipped default's ``turnContext`` marker), pinned over random
conversations: the same inputs always give the same messages, nothing that changes from turn
to turn (the clock, the turn's seed, a per-turn block) is in the stable prefix, and the next
turn's request starts with this turn's stable part when only per-turn blocks changed. The
classic layout (the same preset without the marker) is the comparison."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from console.tokens import count_messages
from roleplay.prompting.assembly import ActorInputs, AuthorNote, Card, assemble
from roleplay.prompting.default_preset import default_preset, default_prompt_data
from roleplay.prompting.presets import LoadedPreset, validate_prompts

CARD = Card(
    name="Mira",
    description="Keeper of the lighthouse.",
    personality="Calm.",
    mes_examples="<START>\n{{user}}: Hello\n{{char}}: Welcome.",
    greeting="Hi.",
)
CACHE_AWARE = default_preset()
CLASSIC = LoadedPreset(tuple(validate_prompts(default_prompt_data("classic"))), name="classic")
HEAD = ("before_character", "after_character", "before_examples", "after_examples")
NOW = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)

words = st.text(alphabet="abcdefghij ", min_size=1, max_size=30).map(lambda t: t.strip() or "x")


@st.composite
def blocks(draw) -> list[dict]:
    """A turn's blocks: constant lore (stable) and per-turn ones (selected lore, memory,
    Agent V2's state, the story stage) at the head positions a capability asks for."""
    count = draw(st.integers(0, 6))
    out = []
    for i in range(count):
        block = {
            "id": f"b{i}",
            "position": draw(st.sampled_from(HEAD)),
            "content": f"block {i}: " + draw(words),
            "order": draw(st.integers(0, 3)),
        }
        if draw(st.booleans()):
            block["per_turn"] = True
        out.append(block)
    return out


@st.composite
def conversations(draw) -> dict:
    turns = draw(st.integers(0, 6))
    history = []
    for i in range(turns):
        history += [
            {"role": "user", "content": f"u{i} " + draw(words)},
            {"role": "assistant", "content": f"a{i} " + draw(words)},
        ]
    return {"history": history, "blocks": draw(blocks()), "input": draw(words)}


def assembled(preset, conversation, *, blocks=None, now=NOW, seed="turn-1", note=None):
    inputs = ActorInputs(
        card=CARD,
        persona_name="Ann",
        persona_description="A traveller.",
        history=conversation["history"],
        user_input=conversation["input"],
        blocks=conversation["blocks"] if blocks is None else blocks,
        author_note=note,
        player_messages=1 + len(conversation["history"]) // 2,
        now=now,
        seed=seed,
    )
    return assemble(
        preset, inputs, count_messages=count_messages, context_limit=100_000, max_output_tokens=256
    )


def next_turn(conversation: dict, reply: str, new_input: str, new_texts: list[str]) -> dict:
    """The following turn: the exchange appended, every per-turn block's text changed."""
    changed = [
        {**b, "content": f"{b['content']} / {new_texts[i % len(new_texts)]}"}
        if b.get("per_turn")
        else b
        for i, b in enumerate(conversation["blocks"])
    ]
    history = [
        *conversation["history"],
        {"role": "user", "content": conversation["input"]},
        {"role": "assistant", "content": reply},
    ]
    return {"history": history, "blocks": changed, "input": new_input}


def starts_with(messages: list[dict], prefix: list[dict]) -> bool:
    """``messages`` begins with ``prefix``, its last message possibly cut (a prefix that
    ends inside a joined system message)."""
    if len(prefix) > len(messages):
        return False
    *whole, last = prefix or [None]
    if last is None:
        return True
    head = messages[: len(whole)]
    other = messages[len(whole)]
    same_meta = {k: v for k, v in last.items() if k != "content"} == {
        k: v for k, v in other.items() if k != "content"
    }
    return head == whole and same_meta and other["content"].startswith(last["content"])


@settings(max_examples=60, deadline=None)
@given(conversations(), st.randoms(use_true_random=False))
def test_the_same_inputs_in_any_order_give_the_same_messages(conversation, rnd):
    shuffled = list(conversation["blocks"])
    rnd.shuffle(shuffled)
    for preset in (CACHE_AWARE, CLASSIC):
        first = assembled(preset, conversation)
        again = assembled(preset, conversation, blocks=shuffled)
        assert again.messages == first.messages
        assert again.stable == first.stable


@settings(max_examples=60, deadline=None)
@given(conversations(), words, words, st.integers(1, 10_000))
def test_the_next_turn_starts_with_this_turns_stable_part(conversation, reply, said, minutes):
    texts = [f"changed {minutes}", said]
    following = next_turn(conversation, reply, said, texts)
    for preset in (CACHE_AWARE, CLASSIC):
        now = assembled(preset, conversation)
        later = assembled(
            preset, following, now=NOW + timedelta(minutes=minutes), seed=f"turn-{minutes}"
        )
        assert starts_with(later.messages, now.stable_prefix())
    # The cache-aware layout's stable prefix reaches the end of the player's input, whatever
    # the per-turn blocks are: everything but the per-turn context after it.
    prompt = assembled(CACHE_AWARE, conversation)
    prefix = prompt.stable_prefix()
    history_end = max(
        (i for i, p in enumerate(prompt.parts) if p.source in ("history", "greeting", "input")),
        default=0,
    )
    assert len(prefix) == history_end + 1 and prefix == prompt.messages[: history_end + 1]
    sources = "+".join(part.source for part in prompt.parts[history_end + 1 :])
    for block in conversation["blocks"]:
        assert (f"block:{block['id']}" in sources) == bool(block.get("per_turn"))


@settings(max_examples=40, deadline=None)
@given(conversations(), st.integers(1, 100_000), words)
def test_no_volatile_value_is_in_the_stable_prefix(conversation, minutes, seed):
    """Prompts using the clock or chance stay out of the stable prefix, and what is left in
    it does not change with the clock, the turn's seed or the per-turn blocks' text."""
    prompts = default_prompt_data()
    prompts.insert(2, {"identifier": "clock", "name": "Clock", "content": "It is {{time}}."})
    prompts.insert(3, {"identifier": "dice", "name": "Dice", "content": "Luck {{roll::1d20}}."})
    preset = LoadedPreset(tuple(validate_prompts(prompts)), name="volatile")
    first = assembled(preset, conversation)
    other = [{**b, "content": b["content"] + "!"} if b.get("per_turn") else b for b in
             conversation["blocks"]]  # fmt: skip
    later = assembled(
        preset, conversation, blocks=other, now=NOW + timedelta(minutes=minutes), seed=seed
    )
    assert first.stable_prefix() == later.stable_prefix()
    stable_sources = [s for (s, _), ok in zip(first.pieces, first.stable, strict=True) if ok]
    assert "prompt:clock" not in stable_sources and "prompt:dice" not in stable_sources
    text = str(first.stable_prefix())
    assert "9:30" not in text and "Luck" not in text


def test_the_classic_layout_keeps_per_turn_blocks_by_the_character():
    conversation = {
        "history": [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}],
        "blocks": [
            {"id": "lore", "position": "after_character", "content": "Lore 8", "per_turn": True},
            {"id": "const", "position": "after_character", "content": "The sea is cold."},
        ],
        "input": "Now?",
    }
    classic = assembled(CLASSIC, conversation)
    assert classic.layout == "classic"
    assert "Lore 8" in classic.messages[0]["content"]
    # The stable prefix ends inside the system message, before the selected lore.
    assert len(classic.stable_prefix()) == 1
    assert "Lore 8" not in classic.stable_prefix()[0]["content"]
    cache_aware = assembled(CACHE_AWARE, conversation)
    assert cache_aware.layout == "cache_aware"
    head = cache_aware.messages[0]["content"]
    assert "The sea is cold." in head and "Lore 8" not in head
    assert cache_aware.messages[-1] == {"role": "system", "content": "Lore 8"}
    assert cache_aware.stable_prefix() == cache_aware.messages[:-1]  # the input included


def test_a_note_in_the_chat_moves_so_it_ends_the_stable_prefix():
    conversation = {
        "history": [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(8)
        ],
        "blocks": [],
        "input": "Now?",
    }
    prompt = assembled(CACHE_AWARE, conversation, note=AuthorNote(content="Be brief.", depth=2))
    prefix = prompt.stable_prefix()
    assert prompt.messages[len(prefix)]["content"] == "Be brief."
