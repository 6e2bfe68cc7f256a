"""The Actor prompt assembled from the shipped default preset: the same messages the
Actor wrote before presets, the budget (oldest history first, the rest never dropped),
worldbook blocks at every position the layout has, the author's note, card overrides,
continue, and what the trace is told."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from console.tokens import count_messages
from roleplay.prompting.assembly import (
    SAFETY_MARGIN_TOKENS,
    ActorInputs,
    AuthorNote,
    Card,
    ContextOverflow,
    assemble,
    capabilities,
)
from roleplay.prompting.default_preset import default_preset, default_prompt_data
from roleplay.prompting.presets import LoadedPreset, validate_prompts

CARD = Card(name="Mira", description="Keeper of the lighthouse.", greeting="Hi.")
PRESET = default_preset()
CLASSIC = LoadedPreset(tuple(validate_prompts(default_prompt_data("classic"))), name="classic")


def history(n: int) -> list[dict]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "word " * 40}
        for i in range(n)
    ]


def build(preset=PRESET, limit=8192, output=256, **fields):
    inputs = ActorInputs(card=fields.pop("card", CARD), persona_name="Ann", **fields)
    return assemble(
        preset, inputs, count_messages=count_messages, context_limit=limit, max_output_tokens=output
    )


def test_the_default_preset_writes_what_the_actor_wrote():
    prompt = build(history=history(2), user_input="Now?")
    assert prompt.messages == [
        {
            "role": "system",
            "content": "You are Mira, in a roleplay with the user. Stay in character.\n\n"
            "Keeper of the lighthouse.",
        },
        {"role": "assistant", "content": "Hi.", "name": "Mira"},
        {"role": "user", "content": history(2)[0]["content"], "name": "Ann"},
        {"role": "assistant", "content": history(2)[1]["content"], "name": "Mira"},
        {"role": "user", "content": "Now?", "name": "Ann"},
    ]
    assert prompt.prompt_tokens == count_messages(prompt.messages)
    assert [part.source for part in prompt.parts] == [
        "prompt:main+prompt:roleplay",
        "greeting",
        "history",
        "history",
        "input",
    ]


def test_oldest_whole_messages_go_first_and_the_rest_is_kept():
    """The classic layout drops just enough of the oldest messages."""
    old = history(40)
    prompt = build(CLASSIC, history=old, user_input="Now?", limit=1200, output=200)
    assert prompt.dropped_history > 0
    kept = [m["content"] for m in prompt.messages[2:-1]]
    assert kept == [m["content"] for m in old[prompt.dropped_history :]]
    assert prompt.messages[-1]["content"] == "Now?"
    assert prompt.prompt_tokens <= 1200 - 200 - SAFETY_MARGIN_TOKENS == prompt.budget
    # One message fewer dropped would not have fitted.
    longer = build(
        CLASSIC, history=old[prompt.dropped_history - 1 :], user_input="Now?", limit=10**6
    )
    assert longer.prompt_tokens > prompt.budget


def test_the_cache_aware_layout_cuts_with_slack_and_keeps_its_start():
    """A cut frees a quarter of the history beyond the excess, and the next turns start
    where it started while the history from there fits (``trimming``)."""
    old = history(40)
    prompt = build(history=old, user_input="Now?", limit=1200, output=200)
    just = build(CLASSIC, history=old, user_input="Now?", limit=1200, output=200)
    assert prompt.dropped_history > just.dropped_history
    kept = [m["content"] for m in prompt.messages[2:-1]]
    assert kept == [m["content"] for m in old[prompt.dropped_history :]]
    assert prompt.prompt_tokens <= prompt.budget - 0.2 * (just.prompt_tokens - 300)
    # Two more exchanges: the history starts at the same message, the prompt grows.
    later = old + history(4)
    again = build(history=later, user_input="And now?", limit=1200, output=200,
                  anchors=prompt.anchors)  # fmt: skip
    assert again.messages[2]["content"] == prompt.messages[2]["content"]
    assert again.prompt_tokens > prompt.prompt_tokens
    # Without the turn before's start, the same history would be cut anew.
    fresh = build(history=later, user_input="And now?", limit=1200, output=200)
    assert fresh.messages[2]["content"] != prompt.messages[2]["content"]


def test_overflow_when_even_the_fixed_part_cannot_fit():
    with pytest.raises(ContextOverflow) as info:
        build(user_input="word " * 2000, limit=1024, output=256)
    assert info.value.code == "context_overflow" and info.value.details["budget"] == 704


def test_worldbook_blocks_go_where_their_position_says():
    card = Card(name="Mira", description="Keeper.", greeting="Hi.", mes_examples="Mira: Tea?")
    blocks = [
        {"id": "before", "position": "before_character", "content": "BEFORE"},
        {"id": "after", "position": "after_character", "content": "AFTER"},
        {"id": "ex-before", "position": "before_examples", "content": "EXB"},
        {"id": "ex-after", "position": "after_examples", "content": "EXA"},
        {"id": "deep", "position": "at_depth", "depth": 1, "content": "DEPTH1"},
    ]
    prompt = build(card=card, history=history(4), user_input="Now?", blocks=blocks)
    system = prompt.messages[0]["content"]
    order = ["BEFORE", "You are Mira", "Keeper.", "AFTER", "EXB", "Example dialogue", "EXA"]
    assert [system.index(text) for text in order] == sorted(system.index(t) for t in order)
    contents = [m["content"] for m in prompt.messages]
    assert contents.index("DEPTH1") == contents.index(history(4)[-1]["content"]) - 1
    assert prompt.unavailable == ()


def test_positions_the_layout_lacks_are_reported_not_dropped_silently():
    blocks = [
        {"id": "note-top", "position": "author_note_top", "content": "TOP"},
        {"id": "outlet", "position": "outlet", "outlet_name": "lore", "content": "X"},
    ]
    prompt = build(history=history(2), user_input="Now?", blocks=blocks)
    assert set(prompt.unavailable) == {"note-top", "outlet"}
    assert all("TOP" not in m["content"] for m in prompt.messages)
    caps = capabilities(PRESET, ActorInputs(card=CARD, persona_name="Ann"))
    assert "author_note_top" not in caps and "at_depth" in caps


def test_the_author_note_sits_at_its_depth_with_its_blocks_and_frequency():
    note = AuthorNote("Keep it foggy.", depth=1, frequency=2)
    blocks = [{"id": "top", "position": "author_note_top", "content": "NOTE-TOP"}]
    shown = build(history=history(4), user_input="Now?", author_note=note, player_messages=2,
                  blocks=blocks)  # fmt: skip
    contents = [m["content"] for m in shown.messages]
    merged = next(c for c in contents if "Keep it foggy." in c)
    assert merged == "NOTE-TOP\nKeep it foggy."
    assert contents.index(merged) == contents.index(history(4)[-1]["content"]) - 1
    hidden = build(history=history(4), user_input="Now?", author_note=note, player_messages=3)
    assert all("foggy" not in m["content"] for m in hidden.messages)


@pytest.mark.parametrize(
    ("position", "head"),
    [
        ("before_prompt", ["author_note", "prompt:main", "prompt:roleplay"]),
        ("after_prompt", ["prompt:main", "author_note", "prompt:roleplay"]),
    ],
)
def test_the_author_note_before_or_after_the_main_prompt(position, head):
    note = AuthorNote("Keep it foggy.", position=position)
    blocks = [{"id": "bottom", "position": "author_note_bottom", "content": "NOTE-END"}]
    prompt = build(history=history(4), user_input="Now?", author_note=note, player_messages=1,
                   blocks=blocks)  # fmt: skip
    # The system messages before the history are joined into one; its source lists them.
    assert prompt.parts[0].source.split("+") == head
    assert "Keep it foggy.\nNOTE-END" in prompt.messages[0]["content"]
    assert all("foggy" not in m["content"] for m in prompt.messages[1:])


def test_a_note_before_a_main_prompt_the_preset_lacks_goes_in_the_chat():
    prompts = [p for p in PRESET.prompts if p.identifier != "main"]
    preset = LoadedPreset(tuple(prompts), name="no main")
    note = AuthorNote("Keep it foggy.", depth=0, position="before_prompt")
    prompt = build(preset, history=history(2), user_input="Now?", author_note=note,
                   player_messages=1)  # fmt: skip
    sources = [part.source for part in prompt.parts]
    assert sources.index("author_note") > max(i for i, s in enumerate(sources) if s == "history")


def test_card_overrides_and_the_persona():
    card = Card(
        name="Mira",
        description="Keeper.",
        personality="dry",
        scenario="a storm",
        system_prompt="You are {{char}} and nobody else.",
        post_history_instructions="Stay brief.",
    )
    prompt = build(card=card, user_input="Hi", persona_description="a courier")
    system = prompt.messages[0]["content"]
    assert system.startswith("You are Mira and nobody else.")
    assert "Mira's personality: dry" in system and "Scenario: a storm" in system
    assert "About Ann: a courier" in system
    assert prompt.messages[-1] == {"role": "system", "content": "Stay brief."}


def test_continue_ends_with_the_reply_to_go_on_from():
    prompt = build(history=history(2), continuing="The gate opens")
    assert prompt.messages[-1] == {"role": "assistant", "content": "The gate opens", "name": "Mira"}
    assert all(m.get("name") != "Ann" or m["content"] != "" for m in prompt.messages)


def test_macros_are_seeded_and_what_is_unknown_is_listed():
    prompts = [p.model_dump(mode="json") for p in PRESET.prompts]
    main = next(p for p in prompts if p["identifier"] == "main")
    main["content"] = "Roll {{roll::1d1000}} at {{time}}. {{mystery}} {{getvar::mood}}"
    preset = LoadedPreset(tuple(validate_prompts(prompts)), "custom")
    now = datetime(2026, 11, 30, 15, 7, tzinfo=UTC)
    first = build(preset, user_input="Hi", seed="turn-1", now=now)
    again = build(preset, user_input="Hi", seed="turn-1", now=now)
    other = [build(preset, user_input="Hi", seed=f"turn-{i}", now=now) for i in range(2, 6)]
    assert first.messages == again.messages
    assert any(o.messages[0] != first.messages[0] for o in other)
    assert "3:07 PM" in first.messages[0]["content"]
    assert first.unknown_macros == ("{{mystery}}",) and first.missing_variables == ("mood",)
