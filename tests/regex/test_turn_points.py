"""The turn's points (``regex_scripts.turns``) on plain data: prompt-only depth counts from
the newest message (the player's input when there is one), new items are made and the
originals are untouched, display texts are keyed by message id, lore blocks by their depth."""

from __future__ import annotations

from dataclasses import dataclass

from roleplay.regex_scripts.engine import compile_script
from roleplay.regex_scripts.selectors import ActiveScripts
from roleplay.regex_scripts.turns import display_texts, lore_block, prompt_history, stored_text


@dataclass(frozen=True)
class Line:
    id: str
    role: str
    content: str


def scripts(**extra) -> ActiveScripts:
    raw = {"scriptName": "s", "findRegex": "/x/g", "replaceString": "y", "placement": [1, 2]}
    return ActiveScripts((compile_script({**raw, **extra}),), {"user": "Ann", "char": "Mira"})


HISTORY = [Line("1", "user", "x1"), Line("2", "assistant", "x2"), Line("3", "user", "x3")]


def test_prompt_only_depth_counts_the_input_as_the_newest():
    newest_two = scripts(promptOnly=True, maxDepth=1)
    lines, text = prompt_history(newest_two, HISTORY, "x0")
    assert [m.content for m in lines] == ["x1", "x2", "y3"] and text == "y0"
    lines, text = prompt_history(newest_two, HISTORY, None)
    assert [m.content for m in lines] == ["x1", "y2", "y3"] and text is None
    older = scripts(promptOnly=True, minDepth=2)
    lines, text = prompt_history(older, HISTORY, "x0")
    assert [m.content for m in lines] == ["y1", "y2", "x3"] and text == "x0"
    assert [m.content for m in HISTORY] == ["x1", "x2", "x3"]  # the originals stay


def test_prompt_history_leaves_stored_text_scripts_alone():
    lines, text = prompt_history(scripts(), HISTORY, "x0")
    assert [m.content for m in lines] == ["x1", "x2", "x3"] and text == "x0"
    assert stored_text(scripts(), "x0", "user") == "y0"
    assert stored_text(scripts(promptOnly=True), "x0", "user") == "x0"
    assert stored_text(scripts(), "x0", "system") == "x0"


def test_display_texts_only_for_what_changes():
    shown = display_texts(scripts(markdownOnly=True, maxDepth=0), HISTORY)
    assert shown == {"3": "y3"}
    assert display_texts(scripts(), HISTORY) == {}


def test_lore_blocks_at_depth_use_their_depth():
    shallow = scripts(placement=[5], maxDepth=2)
    deep = {"id": "a", "position": "at_depth", "depth": 4, "content": "x"}
    assert lore_block(shallow, deep)["content"] == "x"
    assert lore_block(shallow, {**deep, "depth": 1})["content"] == "y"
    assert lore_block(shallow, {"id": "b", "position": "after_character", "content": "x"}) == {
        "id": "b", "position": "after_character", "content": "y",
    }  # fmt: skip
