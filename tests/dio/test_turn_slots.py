"""DIO's replacement rules (``roleplay.dio.engine.slots``): where the compiled prompt goes in
the Actor's preset, the three hard errors, and the SHA-256 check. Pure."""

from __future__ import annotations

import pytest

from roleplay.dio.engine.ports import ActivePrompt, DioError
from roleplay.dio.engine.slots import (
    COMPILED_MACRO,
    COMPILED_VARIABLE,
    apply_compiled,
    sha256_of,
    slot_of,
    verify,
)
from roleplay.prompting import presets as p
from roleplay.prompting.assembly import ActorInputs, Card, assemble
from roleplay.prompting.default_preset import default_preset

WINDOW = {
    "count_messages": lambda messages: sum(len(m["content"]) // 4 + 4 for m in messages),
    "context_limit": 8192,
    "max_output_tokens": 256,
}
COMPILED = "Mira answers in short sentences. She is a guard at the north gate."


def preset(*prompts: dict) -> p.LoadedPreset:
    """Prompts read field by field only (a saved preset could never hold two ``roleplay``
    prompts; an older row or an import might), with the two required markers."""
    data = [
        *prompts,
        {"identifier": "chatHistory", "name": "h"},
        {"identifier": "userInput", "name": "u"},
    ]
    return p.LoadedPreset(tuple(p.parse_prompts(data)), name="Mine", id="abc", version=2)


def fails(loaded: p.LoadedPreset, code: str) -> None:
    with pytest.raises(DioError) as caught:
        apply_compiled(loaded, COMPILED)
    assert caught.value.code == code
    with pytest.raises(DioError):
        slot_of(loaded)


def test_one_roleplay_prompt_is_replaced_whole_with_its_role_and_place_kept():
    loaded = preset(
        {"identifier": "main", "name": "Main", "content": "Stay in character."},
        {"identifier": "r", "name": "roleplay", "role": "user", "content": "{{description}}"},
        {
            "identifier": "tail",
            "name": "Tail",
            "content": "Keep it short: {{getvar::systemPrompt}}",
        },
    )
    replaced = apply_compiled(loaded, COMPILED)
    before = [(x.identifier, x.role, x.injection) for x in loaded.prompts]
    after = [(x.identifier, x.role, x.injection) for x in replaced.preset.prompts]
    assert after == before
    assert replaced.preset.prompt("r").content == COMPILED
    # The rule takes the roleplay prompt; a placeholder elsewhere is left as it is.
    assert replaced.preset.prompt("tail").content == loaded.prompt("tail").content
    assert replaced.variables == {}
    assert replaced.slot == p.CharacterSlot("r", "roleplay")
    assert (replaced.preset.name, replaced.preset.id) == ("Mine", "abc")
    assert loaded.prompt("r").content == "{{description}}"  # the loaded preset is untouched


def test_without_roleplay_the_one_placeholder_becomes_the_compiled_variable():
    loaded = preset(
        {"identifier": "a", "name": "A", "content": "Intro."},
        {"identifier": "s", "name": "S", "content": "Before {{ getvar::systemPrompt }} after."},
    )
    replaced = apply_compiled(loaded, COMPILED)
    assert replaced.preset.prompt("s").content == f"Before {COMPILED_MACRO} after."
    assert replaced.preset.prompt("a").content == "Intro."
    assert replaced.variables == {COMPILED_VARIABLE: COMPILED}
    assert replaced.slot == p.CharacterSlot("s", "placeholder")
    assert [x.identifier for x in replaced.preset.prompts] == [x.identifier for x in loaded.prompts]


def test_two_roleplay_prompts_are_a_hard_error():
    fails(
        preset(
            {"identifier": "r1", "name": "roleplay", "content": "one"},
            {"identifier": "r2", "name": "roleplay", "content": "two"},
        ),
        "dio_slot_duplicate_roleplay",
    )


def test_no_slot_is_a_hard_error():
    fails(
        preset({"identifier": "a", "name": "A", "content": "nothing to fill"}), "dio_slot_missing"
    )
    # a disabled roleplay prompt is no slot either
    fails(
        preset({"identifier": "r", "name": "roleplay", "content": "x", "enabled": False}),
        "dio_slot_missing",
    )


def test_several_placeholders_are_a_hard_error_in_one_prompt_or_across_prompts():
    across = preset(
        {"identifier": "a", "name": "A", "content": "{{getvar::systemPrompt}}"},
        {"identifier": "b", "name": "B", "content": "{{getvar::systemPrompt}}"},
    )
    fails(across, "dio_slot_ambiguous_placeholder")
    twice = preset(
        {
            "identifier": "a",
            "name": "A",
            "content": "{{getvar::systemPrompt}} {{getvar::systemPrompt}}",
        }
    )
    fails(twice, "dio_slot_ambiguous_placeholder")


def test_the_compiled_prompt_reaches_the_assembled_actor_messages_in_the_slot():
    loaded = default_preset()
    replaced = apply_compiled(loaded, COMPILED)
    inputs = ActorInputs(
        card=Card(name="Mira", description="ORIGINAL DESCRIPTION"),
        persona_name="Player",
        history=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}],
        user_input="What is at the gate?",
        variables=dict(replaced.variables),
    )
    messages = [m["content"] for m in assemble(replaced.preset, inputs, **WINDOW).messages]
    text = "\n".join(messages)
    assert COMPILED in text and "ORIGINAL DESCRIPTION" not in text
    assert messages[-1] == "What is at the gate?"
    assert "Hi" in messages and "Hello." in messages
    assert any("Stay in character" in m for m in messages)  # the control text is kept


def test_the_placeholder_variable_is_expanded_by_the_assembly():
    loaded = preset({"identifier": "s", "name": "S", "content": "Be: {{getvar::systemPrompt}}"})
    replaced = apply_compiled(loaded, COMPILED)
    inputs = ActorInputs(
        card=Card(name="Mira"),
        persona_name="Player",
        history=[],
        user_input="Hi",
        variables={"systemPrompt": "THE OLD ONE", **replaced.variables},
    )
    messages = [m["content"] for m in assemble(replaced.preset, inputs, **WINDOW).messages]
    assert messages[0] == f"Be: {COMPILED}"


def active(text: str, sha: str) -> ActivePrompt:
    return ActivePrompt(version=3, version_id="v3", compiled_prompt=text, sha256=sha)


def test_the_sha256_is_checked():
    assert verify(active(COMPILED, sha256_of(COMPILED))) == COMPILED
    assert verify(active(COMPILED, sha256_of(COMPILED).upper())) == COMPILED
    for sha in (sha256_of(COMPILED + " "), "", "zz", "é" * 64):
        with pytest.raises(DioError) as caught:
            verify(active(COMPILED, sha))
        assert caught.value.code == "dio_hash_mismatch"
