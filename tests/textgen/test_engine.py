"""The pure text-completion engine: built-in instruct templates render a fixed chat as
SillyTavern does (the built-ins' fields are those of SillyTavern's shipped preset files of
the same names; expected texts written by hand from its rules), stop strings, the local
stop cut, template files and samplers (no database)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roleplay.textgen.engine import (
    BUILTIN_TEMPLATES,
    SamplerError,
    StopCutter,
    TemplateError,
    check_samplers,
    parse_context,
    parse_instruct,
    parse_template_file,
    render_prompt,
    stop_strings,
    wire_samplers,
)

CHAT = [
    {"role": "system", "content": "You are Seraphina."},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello, traveler."},
    {"role": "user", "content": "Who are you?"},
]

EXPECTED = {
    "chatml": (
        "<|im_start|>system\nYou are Seraphina.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\nHello, traveler.<|im_end|>\n"
        "<|im_start|>user\nWho are you?<|im_end|>\n"
        "<|im_start|>assistant\n"
    ),
    "alpaca": (
        "### Instruction:\nYou are Seraphina.\n\n"
        "### Instruction:\nHi\n\n"
        "### Response:\nHello, traveler.\n\n"
        "### Instruction:\nWho are you?\n\n"
        "### Response:\n"
    ),
    "llama3": (
        "<|start_header_id|>system<|end_header_id|>\n\nYou are Seraphina.<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\nHello, traveler.<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nWho are you?<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    ),
    "mistral_v7": (
        "[SYSTEM_PROMPT] You are Seraphina.[/SYSTEM_PROMPT]"
        "[INST] Hi[/INST] Hello, traveler.</s>"
        "[INST] Who are you?[/INST] "
    ),
    "gemma2": (
        "<start_of_turn>user\nYou are Seraphina.<end_of_turn>\n"
        "<start_of_turn>user\nHi<end_of_turn>\n"
        "<start_of_turn>model\nHello, traveler.<end_of_turn>\n"
        "<start_of_turn>user\nWho are you?<end_of_turn>\n"
        "<start_of_turn>model\n"
    ),
}


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_each_builtin_renders_the_chat_as_sillytavern_does(key):
    rendered = render_prompt(CHAT, BUILTIN_TEMPLATES[key], char_name="Seraphina", user_name="Ann")
    assert rendered == EXPECTED[key]


def test_every_builtin_has_an_expected_rendering():
    assert set(BUILTIN_TEMPLATES) == set(EXPECTED)


def test_chatml_stop_strings_are_its_stop_sequence_its_sequences_and_the_user_label():
    stops = stop_strings(BUILTIN_TEMPLATES["chatml"], char_name="Seraphina", user_name="Ann")
    assert stops == [
        "<|im_end|>",
        "\n<|im_start|>user",
        "\n<|im_start|>assistant",
        "\n<|im_start|>system",
        "\nAnn:",
    ]


def test_unwrapped_sequences_are_stop_strings_without_a_newline():
    stops = stop_strings(BUILTIN_TEMPLATES["llama3"], char_name="S", user_name="U")
    assert stops[0] == "<|eot_id|>"
    assert "<|start_header_id|>user<|end_header_id|>\n\n" in stops


def test_a_continue_ends_with_the_reply_to_go_on_from_without_its_suffix():
    chat = [*CHAT[:3]]
    text = render_prompt(
        chat, BUILTIN_TEMPLATES["chatml"], char_name="S", user_name="Ann", continue_final=True
    )
    assert text.endswith("<|im_start|>assistant\nHello, traveler.")


def test_force_names_a_speaker_who_is_neither_the_character_nor_the_user():
    chat = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "name": "Lia", "content": "Yo"},
    ]
    text = render_prompt(chat, BUILTIN_TEMPLATES["chatml"], char_name="S", user_name="Ann")
    assert "<|im_start|>user\nHi<|im_end|>" in text
    assert "<|im_start|>assistant\nLia: Yo<|im_end|>" in text


def test_none_never_names_and_first_and_last_sequences_apply():
    template = parse_instruct({
        "input_sequence": "<u>", "output_sequence": "<a>", "first_output_sequence": "<a1>",
        "last_output_sequence": "<aN>", "first_input_sequence": "<u1>", "wrap": False,
        "names_behavior": "none", "input_suffix": "|", "output_suffix": "|",
        "system_sequence": "<s>", "system_suffix": "|", "macro": True,
    })  # fmt: skip
    chat = [*CHAT[1:]]
    text = render_prompt(chat, template, char_name="S", user_name="Ann")
    assert text == "<u1>Hi|<a1>Hello, traveler.|<u>Who are you?|<aN>"


def test_a_context_template_lays_out_the_system_prompt_and_the_chat_start():
    context = parse_context({
        "story_string": "<<SYS>>{{#if system}}{{system}}\n{{/if}}{{#if wiAfter}}x{{/if}}<</SYS>>",
        "chat_start": "*** Chat ***", "names_as_stop_strings": False,
    })  # fmt: skip
    text = render_prompt(
        CHAT, BUILTIN_TEMPLATES["alpaca"], char_name="S", user_name="Ann", context=context
    )
    assert text.startswith("<<SYS>>You are Seraphina.\n<</SYS>>\n*** Chat ***\n### Instruction:")
    stops = stop_strings(BUILTIN_TEMPLATES["alpaca"], char_name="S", user_name="A", context=context)
    assert "\nA:" not in stops


def test_macros_in_sequences_name_the_speaker():
    template = parse_instruct({"input_sequence": "[{{user}}]", "output_sequence": "[{{char}}]",
                               "wrap": False, "names_behavior": "none"})  # fmt: skip
    text = render_prompt(CHAT[1:2], template, char_name="S", user_name="Ann")
    assert text == "[Ann]Hi[S]"


def test_the_stop_cutter_holds_a_possible_start_and_cuts_at_the_stop():
    cutter = StopCutter(["<|im_end|>", "\nAnn:"])
    assert cutter.feed("Hello <|im") == "Hello "
    assert cutter.feed("_en") == ""
    assert cutter.feed("d|> more") == ""
    assert cutter.stopped
    assert cutter.feed("ignored") == ""


def test_the_stop_cutter_lets_a_false_start_through():
    cutter = StopCutter(["<|im_end|>"])
    assert cutter.feed("a <|i") == "a "
    assert cutter.feed("t") == "<|it"
    assert cutter.finish() == ""
    cutter.feed("tail <")
    assert cutter.finish() == "<"


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="ab<|>\nXY", max_size=40), st.lists(st.integers(1, 6), max_size=12))
def test_the_stop_cutter_shows_exactly_the_text_before_the_first_stop(text, sizes):
    stops = ["<|>", "\nX"]
    cutter = StopCutter(stops)
    shown, rest = [], text
    for size in [*sizes, len(text)]:
        piece, rest = rest[:size], rest[size:]
        shown.append(cutter.feed(piece))
    shown.append(cutter.finish())
    first = min((i for i in (text.find(s) for s in stops) if i >= 0), default=len(text))
    assert "".join(shown) == text[:first]


def test_a_file_is_an_instruct_a_context_or_both():
    assert parse_template_file({"input_sequence": "a", "output_sequence": "b"})[0] is not None
    assert parse_template_file({"story_string": "{{system}}"})[1] is not None
    both = parse_template_file(
        {
            "instruct": {"input_sequence": "a", "output_sequence": "b"},
            "context": {"story_string": ""},
        }
    )
    assert both[0] is not None and both[1] is not None


@pytest.mark.parametrize(
    "raw, field",
    [
        ([], "file"),
        ({"output_sequence": "b"}, "input_sequence"),
        ({"input_sequence": 3, "output_sequence": "b"}, "input_sequence"),
        ({"input_sequence": "a", "output_sequence": "b", "wrap": "yes"}, "wrap"),
        ({"input_sequence": "a", "output_sequence": "b", "names_behavior": "x"}, "names_behavior"),
        ({"input_sequence": "a" * 2001, "output_sequence": "b"}, "input_sequence"),
        ({"story_string": None}, "story_string"),
        ({"instruct": None, "context": None}, "file"),
    ],
)
def test_a_bad_file_names_its_field(raw, field):
    with pytest.raises(TemplateError) as caught:
        parse_template_file(raw)
    assert caught.value.code == "instruct_template_invalid"
    assert caught.value.details == {"field": field}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=20), inner, max_size=5)
    ),
    max_leaves=12,
)
KEYS = st.sampled_from(["input_sequence", "output_sequence", "story_string", "wrap", "instruct",
                        "context", "names_behavior", "stop_sequence", "name", "macro"])  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.one_of(JSON, st.dictionaries(KEYS, JSON, max_size=6)))
def test_any_json_parses_or_is_refused_with_a_code(raw):
    try:
        instruct, context = parse_template_file(raw)
    except TemplateError as exc:
        assert exc.code == "instruct_template_invalid"
        return
    if instruct is not None:
        json.dumps(instruct.to_dict())
        render_prompt(CHAT, instruct, char_name="S", user_name="U", context=context)


def test_samplers_map_to_each_wire_and_unset_ones_are_not_sent():
    values = {"top_k": 40, "repetition_penalty": 1.1, "typical_p": None, "mirostat_mode": 2}
    assert wire_samplers("koboldcpp", values) == {"top_k": 40, "rep_pen": 1.1, "mirostat": 2}
    assert wire_samplers("llamacpp", values) == {"top_k": 40, "repeat_penalty": 1.1, "mirostat": 2}
    assert wire_samplers("openai_completions", values) == {
        "top_k": 40, "repetition_penalty": 1.1, "mirostat_mode": 2,
    }  # fmt: skip


@pytest.mark.parametrize(
    "values, field",
    [
        ({"min_p": 1.5}, "min_p"),
        ({"top_k": 2.5}, "top_k"),
        ({"xtc_threshold": 0.9}, "xtc_threshold"),
        ({"mirostat_mode": 3}, "mirostat_mode"),
        ({"dry_base": True}, "dry_base"),
        ({"nope": 1}, "nope"),
    ],
)
def test_samplers_out_of_range_are_refused(values, field):
    with pytest.raises(SamplerError) as caught:
        check_samplers(values)
    assert caught.value.field == field
