"""What Agent V2's models read (``roleplay.agentic.engine.inputs``), pure: the Actor's block and
its cap, the default note, the background's 9 messages, 6,500-character state, 4,000-
character persona and separate query block, and what each role sees."""

from __future__ import annotations

from roleplay.agentic.engine import inputs
from roleplay.agentic.engine.ledger import entry_for

SHEET = inputs.Sheet("Mira", "A lighthouse keeper.", "Wry, patient.", "Welcome, traveller.")


def _materials(role="orchestrator", **kwargs):
    defaults = dict(
        role=role, sheet=SHEET, persona_name="Ann", persona_description="A sailor.",
        history=[], query="I hand over the key.", state=None, entries=[], turn=3, revision=2,
    )  # fmt: skip
    return inputs.materials(**{**defaults, **kwargs})


def test_the_actor_reads_the_default_note_without_a_state():
    assert inputs.actor_block(None, [], max_state_chars=8000) == inputs.DEFAULT_NOTE
    assert inputs.actor_block("  ", [], max_state_chars=8000) == inputs.DEFAULT_NOTE


def test_the_actor_block_is_capped_at_max_state_chars_plus_2000():
    entries = [entry_for("manage_callbacks", n, "x" * 800, "q") for n in range(30)]
    block = inputs.actor_block("S" * 1000, entries, max_state_chars=1000)
    assert len(block) <= 3000 and block.startswith("S" * 1000) and "Specialist notes" in block
    long_state = inputs.actor_block("S" * 5000, entries, max_state_chars=1000)
    assert len(long_state) == 3000 and long_state.startswith("S" * 100)


def test_the_background_reads_the_last_nine_non_empty_messages():
    history = [("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(12)]
    history += [("assistant", "   "), ("system", "hidden"), ("tool", "also hidden")]
    text = _materials(history=history)
    dialogue = text.split("RECENT DIALOGUE\n")[1].split("\n\n")[0].splitlines()
    assert dialogue[0] == "Mira: m3" and dialogue[-1] == "Mira: m11" and len(dialogue) == 9
    assert "hidden" not in text


def test_the_query_is_its_own_block_and_the_state_is_capped():
    text = _materials(state="S" * 7000)
    state = text.split("CONTINUITY STATE\n")[1].split("\n\n")[0]
    assert len(state) == inputs.BACKGROUND_STATE_CHARS
    assert text.split("LATEST USER QUERY\n")[1].startswith("I hand over the key.")


def test_the_persona_is_cut_and_labelled_as_the_users_identity():
    text = _materials(persona_description="p" * 5000)
    identity = text.split("USER IDENTITY")[1].split("\n\n")[0]
    assert "not a character to play" in identity
    assert identity.count("p") <= inputs.PERSONA_CHARS + 5  # the label's own letters


def test_what_each_role_sees():
    orchestrator = _materials()
    assert "Welcome, traveller." not in orchestrator and inputs.NO_TOOL_LINE in orchestrator
    for role in ("specialist", "director"):
        text = _materials(role=role)
        assert "Opening message: Welcome, traveller." in text
        assert inputs.NO_TOOL_LINE not in text
    assert "revision 2" in orchestrator and orchestrator.startswith("TURN\n3")


def test_selected_lore_is_a_section_of_its_own_within_its_cap():
    from roleplay.agentic.engine.inputs import LORE_CHARS, Sheet, materials

    common = dict(
        role="specialist", sheet=Sheet(name="Mira"), persona_name="Ann", persona_description="",
        history=[], query="hi", state=None, entries=[], turn=2, revision=0,
    )  # fmt: skip
    assert "WORLD NOTES" not in materials(**common)
    text = materials(**common, lore=["The copper key opens the side gate.", "x" * 9000])
    notes = text.split("WORLD NOTES")[1].split("\n", 1)[1].split("\n\nCONTINUITY STATE")[0]
    assert notes.startswith("The copper key opens the side gate.")
    assert len(notes) <= LORE_CHARS
