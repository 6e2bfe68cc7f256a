"""The positions a layout offers are remembered per preset and per the inputs that decide
them (``prompting.offered``): every answer equals a fresh pass over the preset, a change of
card, persona, variables or author's note is a new answer, and a layout where a volatile
macro may blank a whole prompt is worked out again every turn (one beside other text is
kept)."""

from __future__ import annotations

import gc

from roleplay.prompting import offered
from roleplay.prompting.assembly import ActorInputs, AuthorNote, Card, capabilities
from roleplay.prompting.default_preset import default_preset, default_prompt_data
from roleplay.prompting.presets import LoadedPreset, validate_prompts

CARD = Card(name="Mira", description="Keeper of the lighthouse.", greeting="Hi.")


def preset_of(**contents: str) -> LoadedPreset:
    """The shipped default with these prompts' text, and only the character prompts named."""
    kept = {"main", "chatHistory", "userInput", "turnContext", *contents}
    rows = [
        dict(row, content=contents.get(row["identifier"], row.get("content", "")))
        for row in default_prompt_data()
        if row["identifier"] in kept
    ]
    return LoadedPreset(tuple(validate_prompts(rows)), name="test")


def test_each_input_that_decides_the_layout_gives_its_own_answer():
    offered.forget()
    preset = default_preset()
    plain = ActorInputs(card=CARD, persona_name="Ann")
    examples = ActorInputs(card=Card(name="Mira", mes_examples="<START>\nHi"), persona_name="Ann")
    note = AuthorNote("Keep it foggy.", frequency=1, position="before_prompt")
    noted = ActorInputs(card=CARD, persona_name="Ann", author_note=note, player_messages=1)
    first = [capabilities(preset, inputs) for inputs in (plain, examples, noted)]
    assert "before_examples" in first[1] and "before_examples" not in first[0]
    assert "author_note_top" in first[2] and "author_note_top" not in first[0]
    # asked again (the next turns), each is the same answer
    assert [capabilities(preset, inputs) for inputs in (plain, examples, noted)] == first


def test_a_chat_variable_that_blanks_the_character_prompts_is_a_new_answer():
    offered.forget()
    preset = preset_of(main="{{getvar::rules}}")
    blank = ActorInputs(card=CARD, persona_name="Ann", variables={"rules": ""})
    ruled = ActorInputs(card=CARD, persona_name="Ann", variables={"rules": "Stay in Greyport."})
    assert "after_character" not in capabilities(preset, blank)
    assert "after_character" in capabilities(preset, ruled)
    assert "after_character" not in capabilities(preset, blank)


def test_a_layout_with_a_volatile_macro_is_not_kept():
    offered.forget()
    # the character region exists only on the turns the draw is not blank
    preset = preset_of(main="{{random::Stay in Greyport.,}}")
    capabilities(preset, ActorInputs(card=CARD, persona_name="Ann", seed="turn-1"))
    assert offered._KEPT.get(id(preset)) is None
    answers = {
        capabilities(preset, ActorInputs(card=CARD, persona_name="Ann", seed=f"turn-{n}"))
        for n in range(40)
    }
    assert len(answers) == 2  # with and without the character region, as drawn


def test_a_volatile_macro_beside_other_text_is_kept_and_is_what_a_fresh_pass_gives():
    offered.forget()
    preset = preset_of(main="It is {{time}}; roll {{roll::1d20}} {{random::,Stay.}}")
    inputs = [ActorInputs(card=CARD, persona_name="Ann", seed=f"turn-{n}") for n in range(20)]
    first = capabilities(preset, inputs[0])
    assert offered._KEPT.get(id(preset))  # kept: the prompt is there whatever the draw
    for each in inputs:
        offered.forget()
        assert capabilities(preset, each) == first  # a fresh pass agrees on every draw
    assert "after_character" in first


def test_a_new_preset_version_starts_afresh_and_the_old_answers_go_with_it():
    offered.forget()
    old = preset_of(main="Stay in Greyport.")
    inputs = ActorInputs(card=CARD, persona_name="Ann")
    assert "after_character" in capabilities(old, inputs)
    new = preset_of(main="{{getvar::rules}}")
    assert "after_character" not in capabilities(new, inputs)
    kept = id(old)
    del old
    gc.collect()
    assert kept not in offered._KEPT


def test_each_preset_keeps_a_bounded_number_of_answers():
    offered.forget()
    preset = default_preset()
    for n in range(offered.PER_PRESET + 20):
        capabilities(preset, ActorInputs(card=CARD, persona_name=f"Player {n}"))
    assert len(offered._KEPT[id(preset)]) == offered.PER_PRESET
