"""The Director's state check and the ledger projection (``roleplay.agentic.engine.state`` and
``.ledger``), pure: the length bounds at 499/500 and ``maxStateChars`` ± 1, the header and
the section order, reasoning tags, an unchanged state; the projection of 70 entries to at
most 60, at most 6 of a type, each at most 900 characters, within the total cap."""

from __future__ import annotations

import pytest

from roleplay.agentic.engine import ledger
from roleplay.agentic.engine.state import (
    MIN_STATE_CHARS,
    NO_HEADER,
    OK,
    REASONING,
    SECTIONS,
    TOO_LONG,
    TOO_SHORT,
    UNCHANGED,
    check_candidate,
)
from roleplay.prompting.director_state import DIRECTOR_STATE_HEADER, DIRECTOR_STATE_SECTIONS


def _state(length: int, sections=DIRECTOR_STATE_SECTIONS) -> str:
    body = "\n".join(f"{label}: -" for label in sections)
    text = f"{DIRECTOR_STATE_HEADER}\n{body}\nNotes: "
    assert len(text) <= length, "the sections alone are longer than asked"
    return text + "x" * (length - len(text))


@pytest.mark.parametrize(
    ("length", "code"),
    [(MIN_STATE_CHARS - 1, TOO_SHORT), (MIN_STATE_CHARS, OK), (8000, OK), (8001, TOO_LONG)],
)
def test_length_bounds(length, code):
    assert check_candidate(_state(length), old=None, max_chars=8000).code == code


def test_max_state_chars_is_the_scenarios():
    text = _state(1000)
    assert check_candidate(text, old=None, max_chars=1000).code == OK
    assert check_candidate(text, old=None, max_chars=999).code == TOO_LONG


def test_header_sections_and_order():
    assert check_candidate("x" * 600, old=None, max_chars=8000).code == NO_HEADER
    assert check_candidate("Intro.\n" + _state(700), old=None, max_chars=8000).code == NO_HEADER
    missing = _state(900, DIRECTOR_STATE_SECTIONS[:-1])
    verdict = check_candidate(missing, old=None, max_chars=8000)
    assert verdict.code == SECTIONS and DIRECTOR_STATE_SECTIONS[-1] in verdict.message
    swapped = list(DIRECTOR_STATE_SECTIONS)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    verdict = check_candidate(_state(900, swapped), old=None, max_chars=8000)
    assert verdict.code == SECTIONS and "out of order" in verdict.message


@pytest.mark.parametrize("tag", ["<think>", "</think>", "<Thinking>", "<reasoning type='x'>"])
def test_reasoning_tags_are_refused(tag):
    text = _state(900).replace("Notes: ", f"Notes: {tag} ")
    assert check_candidate(text, old=None, max_chars=8000).code == REASONING


def test_an_unchanged_state_is_valid_but_makes_no_revision():
    text = _state(900)
    verdict = check_candidate(f"  {text}\n", old=text, max_chars=8000)
    assert verdict.code == UNCHANGED and verdict.valid and verdict.text == text
    assert check_candidate(text, old=text + "y", max_chars=8000).code == OK
    assert not check_candidate("", old=None, max_chars=8000).valid


def _entries(n: int, types=ledger.TYPES, analysis="a" * 100) -> list[dict]:
    return [
        {
            "type": types[i % len(types)],
            "key": f"analyze_plot:turn:{i}",
            "status": "active",
            "payload": {"analysis": f"{i}:{analysis}"},
        }
        for i in range(n)
    ]


def test_projection_of_seventy_entries():
    projected = ledger.project(_entries(70), max_chars=10**6)
    assert len(projected) <= 60 and all(e["key"] != "analyze_plot:turn:9" for e in projected)
    counts: dict[str, int] = {}
    for entry in projected:
        counts[entry["type"]] = counts.get(entry["type"], 0) + 1
    assert max(counts.values()) <= ledger.PER_TYPE
    assert projected[0]["key"] == "analyze_plot:turn:69"  # newest first


def test_projection_of_one_type_keeps_six_of_the_newest_sixty():
    projected = ledger.project(_entries(70, types=("npc",)), max_chars=10**6)
    assert [e["key"] for e in projected] == [f"analyze_plot:turn:{i}" for i in range(69, 63, -1)]


def test_each_entry_is_cut_and_the_total_is_capped():
    projected = ledger.project(_entries(10, analysis="b" * 2000), max_chars=10**6)
    assert all(len(e["payload"]["analysis"]) == ledger.ENTRY_CHARS for e in projected)
    capped = ledger.project(_entries(10), max_chars=300)
    assert len(ledger.render(capped)) <= 300 and len(capped) == 2
    inactive = [{**e, "status": "superseded"} for e in _entries(5)]
    assert ledger.project(inactive, max_chars=10**6) == []


def test_an_entry_written_with_a_commit():
    entry = ledger.entry_for("manage_callbacks", 4, "The key is promised back.", "I take it.")
    assert entry == {
        "type": "callback",
        "key": "manage_callbacks:turn:4",
        "status": "active",
        "payload": {
            "analysis": "The key is promised back.",
            "sourceTool": "manage_callbacks",
            "sourceTurn": 4,
            "userQuery": "I take it.",
        },
    }
    assert set(ledger.TOOL_TYPES.values()) < set(ledger.TYPES)
