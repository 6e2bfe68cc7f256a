"""Auto-reply suggestions (``roleplay.agentic.engine.autoreply``), pure: the answer shapes the
parser reads (an array, ``{"options"}``, ``{"content"}`` items, code fences, numbered
lines), the cleaning (numbering, quotes, repeats, 160 characters, at most three), the
script check per language, and the material the model reads."""

from __future__ import annotations

import json

import pytest

from roleplay.agentic.engine import autoreply
from roleplay.agentic.engine.autoreply import material, parse_options, script_ok

THREE = ["Go on.", "How do you feel?", "Look around."]


# the answer's shape


def test_a_json_array_of_strings():
    assert parse_options(json.dumps(THREE), "en") == THREE


def test_an_options_object():
    assert parse_options(json.dumps({"options": THREE}), "en") == THREE


def test_an_object_without_options_gives_nothing():
    assert parse_options(json.dumps({"choices": THREE}), "en") == []


def test_items_with_content():
    items = [{"content": text} for text in THREE]
    assert parse_options(json.dumps(items), "en") == THREE
    assert parse_options(json.dumps({"options": items}), "en") == THREE


def test_items_that_are_not_text_are_skipped():
    answer = json.dumps([{"text": "no content key"}, 42, None, "Go on.", {"content": 7}])
    assert parse_options(answer, "en") == ["Go on."]


@pytest.mark.parametrize("fence", ["```json", "```", "```JSON"])
def test_a_code_fence_around_the_json(fence):
    answer = f"{fence}\n{json.dumps({'options': THREE})}\n```"
    assert parse_options(answer, "en") == THREE


def test_an_array_after_some_prose():
    answer = 'Sure! Here they are:\n["Go on.", "How do you feel?", "Look around."]\nEnjoy.'
    assert parse_options(answer, "en") == THREE


def test_numbered_lines():
    answer = "1. Go on.\n2) How do you feel?\n(3) Look around."
    assert parse_options(answer, "en") == THREE


@pytest.mark.parametrize(
    "line",
    ["1. Go on.", "12. Go on.", "- Go on.", "* Go on.", "• Go on.", "(2) Go on.", "2) Go on.",
     "Option 1: Go on.", "1、Go on.", "一、Go on."],
)  # fmt: skip
def test_the_numbering_of_a_line_is_stripped(line):
    assert parse_options(line, "en") == ["Go on."]


def test_bulleted_lines():
    answer = "- Go on.\n- How do you feel?\n- Look around."
    assert parse_options(answer, "en") == THREE


def test_plain_lines_without_numbering_are_each_an_option():
    assert parse_options("Go on.\n\n  How do you feel?  \nLook around.", "en") == THREE


def test_the_intro_line_of_a_numbered_answer_is_not_an_option():
    answer = "Here are three options:\n1. Go on.\n2. How do you feel?\n3. Look around."
    assert parse_options(answer, "en") == THREE


def test_a_bracketed_aside_in_a_numbered_answer_is_not_taken_for_the_array():
    answer = "1. Hand over item [2]\n2. How do you feel?\n3. Look around."
    assert parse_options(answer, "en") == ["Hand over item [2]", *THREE[1:]]


# cleaning


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ('"Go on."', "Go on."),
        ("'Go on.'", "Go on."),
        ("“Go on.”", "Go on."),
        ("‘Go on.’", "Go on."),
        ("「走吧」", "走吧"),
        ("『走吧』", "走吧"),
        ("\"'Go on.'\"", "Go on."),
        ('"Go on.', "Go on."),  # a dangling mark
        ('1. "Go on."', "Go on."),
    ],
)
def test_quotes_around_an_option_are_stripped(raw, clean):
    assert parse_options(json.dumps([raw]), "zh" if "走" in raw else "en") == [clean]


@pytest.mark.parametrize(
    "option",
    [
        '*smiles* "Thank you."',  # a roleplay action, then speech
        "*waves*",
        "I say 'hello'",
        "“Hi,” I say, “bye.”",
        'She said "no" twice.',
    ],
)
def test_quotes_and_asterisks_inside_an_option_are_kept(option):
    assert parse_options(json.dumps([option]), "en") == [option]


def test_a_quoted_option_holding_its_own_quotes_keeps_them():
    assert parse_options(json.dumps(["\"I say 'hello'\""]), "en") == ["I say 'hello'"]


def test_repeats_are_dropped_case_insensitively_keeping_the_first():
    answer = json.dumps(["Go on.", "GO ON.", " go on. ", '"Go on."', "Look around."])
    assert parse_options(answer, "en") == ["Go on.", "Look around."]


def test_each_option_is_cut_to_160_characters():
    long = "word " * 100
    (option,) = parse_options(json.dumps([long]), "en")
    assert autoreply.OPTION_CHARS == 160
    assert len(option) <= 160 and long.startswith(option)
    exact = "a" * 160
    assert parse_options(json.dumps([exact + "bbb"]), "en") == [exact]


def test_at_most_three_options():
    answer = json.dumps(["One.", "Two.", "Three.", "Four.", "Five."])
    assert parse_options(answer, "en") == ["One.", "Two.", "Three."]


def test_empty_and_blank_options_are_dropped():
    assert parse_options(json.dumps(["", "   ", '""', "1.", "Go on."]), "en") == ["Go on."]


@pytest.mark.parametrize("answer", ["", "   ", None, "[]", "{}", "42", '"just text"'])
def test_an_answer_with_nothing_usable_gives_no_options(answer):
    assert parse_options(answer, "en") == []


# the script check


@pytest.mark.parametrize(
    ("text", "language", "ok"),
    [
        ("我们走吧", "zh", True),
        ("我们走吧", "zh-CN", True),
        ("我們走吧", "zh_TW", True),
        ("Let's go", "zh", False),
        ("いこう", "zh", False),  # kana only, no Han
        ("行こう", "ja", True),
        ("カタカナ", "ja-JP", True),
        ("行走", "ja", False),  # Han only, no kana
        ("Let's go", "ja", False),
        ("가자", "ko", True),
        ("가자", "ko-KR", True),
        ("行走", "ko", False),
        ("Let's go", "ko", False),
        ("Let's go", "en", True),
        ("我们走吧", "en", True),
        ("anything", "fr", True),
        ("anything", "", True),
    ],
)
def test_the_script_check(text, language, ok):
    assert script_ok(text, language) is ok


def test_options_not_in_the_requested_script_are_refused():
    answer = json.dumps(["Let's go.", "我们走吧。", "いこう", "你好吗？", "看看四周。", "多的"])
    assert parse_options(answer, "zh") == ["我们走吧。", "你好吗？", "看看四周。"]
    assert parse_options(answer, "ja") == ["いこう"]
    assert parse_options(answer, "ko") == []
    assert parse_options(answer, "en") == ["Let's go.", "我们走吧。", "いこう"]


def test_chinese_numbered_lines():
    answer = "一、继续前进。\n二、你还好吗？\n三、四处看看。"
    assert parse_options(answer, "zh") == ["继续前进。", "你还好吗？", "四处看看。"]


# material


def _dialogue(count):
    return [("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(count)]


def _dialogue_lines(text):
    return text.split("DIALOGUE (the last line is the reply the user answers)\n")[1].split("\n\n")[
        0
    ]


def test_the_material_puts_the_guidance_first():
    text = material(_dialogue(3), character="Mira", user="Ann", guidance="  Keep the key.  ")
    assert text.startswith("GUIDANCE (")
    guidance, dialogue, directions = text.split("\n\n")
    assert guidance.endswith("\nKeep the key.")
    assert dialogue.startswith("DIALOGUE")
    assert directions.startswith("Write three options") and all(
        d in directions for d in autoreply.DIRECTIONS
    )
    assert text.index("Keep the key.") < text.index("m0")


def test_the_material_without_guidance_says_none():
    text = material(_dialogue(2), character="Mira", user="Ann", guidance="   ")
    assert text.split("\n\n")[0].endswith("\n(none)")


def test_the_material_keeps_the_target_and_the_six_messages_before_it():
    lines = _dialogue_lines(
        material(_dialogue(12), character="Mira", user="Ann", guidance="g")
    ).splitlines()
    assert autoreply.CONTEXT_MESSAGES == 6
    assert len(lines) == 7
    assert lines[0] == "Mira: m5" and lines[-1] == "Mira: m11"  # the target reply is last
    assert "m4" not in "\n".join(lines)


def test_the_material_with_few_messages_keeps_them_all_and_names_the_speakers():
    lines = _dialogue_lines(
        material(
            [("user", " Hello. "), ("assistant", " Welcome. ")],
            character="Mira",
            user="Ann",
            guidance="",
        )
    ).splitlines()
    assert lines == ["Ann: Hello.", "Mira: Welcome."]
