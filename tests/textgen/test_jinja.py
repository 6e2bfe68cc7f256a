"""The model's own Jinja chat template (``roleplay.textgen.engine.jinja``): the public ChatML,
Llama 3, Gemma 2/3 and Mistral templates render a fixed chat to the expected text (strict
ones folded: system into the first user message, same-role runs merged), tokenizer configs
in their string and list forms import, stop strings are derived, a template that does not
parse or raises is a coded error, and a hostile template ends within its budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from roleplay.textgen.engine import TemplateError
from roleplay.textgen.engine.jinja import (
    JinjaTemplate,
    checked,
    folded,
    parse_tokenizer_config,
    render_prompt,
    stop_strings,
)

HERE = Path(__file__).parent / "chat_templates"
CHAT = [
    {"role": "system", "content": "You are Alice."},
    {"role": "assistant", "content": "Hello, traveller."},
    {"role": "user", "content": "Hi"},
    {"role": "user", "content": "Anyone there?", "name": "Bob"},
]


def template(name: str, bos: str = "", eos: str = "") -> JinjaTemplate:
    return JinjaTemplate((HERE / f"{name}.jinja").read_text(), bos_token=bos, eos_token=eos)


EXPECTED = {
    "chatml": (
        "", "<|im_end|>",
        "<|im_start|>system\nYou are Alice.<|im_end|>\n"
        "<|im_start|>assistant\nHello, traveller.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>user\nBob: Anyone there?<|im_end|>\n"
        "<|im_start|>assistant\n",
    ),
    "llama3": (
        "<|begin_of_text|>", "<|eot_id|>",
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are Alice.<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\nHello, traveller.<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nBob: Anyone there?<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
    ),
    # Gemma refuses a system message and requires alternation: the chat is folded.
    "gemma2": (
        "<bos>", "<eos>",
        "<bos><start_of_turn>user\nYou are Alice.<end_of_turn>\n"
        "<start_of_turn>model\nHello, traveller.<end_of_turn>\n"
        "<start_of_turn>user\nHi\n\nBob: Anyone there?<end_of_turn>\n<start_of_turn>model\n",
    ),
    "gemma3": (
        "<bos>", "<eos>",
        "<bos><start_of_turn>user\nYou are Alice.<end_of_turn>\n"
        "<start_of_turn>model\nHello, traveller.<end_of_turn>\n"
        "<start_of_turn>user\nHi\n\nBob: Anyone there?<end_of_turn>\n<start_of_turn>model\n",
    ),
    "mistral": (
        "<s>", "</s>",
        "<s>[INST] You are Alice. [/INST]Hello, traveller.</s> [INST] Hi\n\nBob: Anyone there? "
        "[/INST]",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_public_template_renders_the_fixed_chat(name):
    bos, eos, expected = EXPECTED[name]
    chat_template = checked(template(name, bos, eos))
    assert render_prompt(chat_template, CHAT, char_name="Alice", user_name="Ann") == expected


@pytest.mark.parametrize(
    "name, stops",
    [
        ("chatml", ["<|im_end|>", "\nAnn:"]),
        ("llama3", ["<|eot_id|>", "\nAnn:"]),
        ("gemma3", ["<eos>", "<end_of_turn>", "\nAnn:"]),
        ("mistral", ["</s>", "\nAnn:"]),
    ],
)
def test_stop_strings_are_eos_the_end_of_turn_marker_and_the_user_label(name, stops):
    bos, eos, _ = EXPECTED[name]
    assert stop_strings(template(name, bos, eos), user_name="Ann") == stops


def test_a_continue_renders_up_to_the_end_of_the_last_reply():
    chat = [*CHAT[:3], {"role": "assistant", "content": "Well, I"}]
    text = render_prompt(template("chatml"), chat, continue_final=True)
    assert text.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nWell, I")
    gemma = render_prompt(template("gemma3", "<bos>"), chat, continue_final=True)
    assert gemma.endswith("<start_of_turn>model\nWell, I")


def test_the_fold_rule():
    chat = [
        {"role": "system", "content": "Rules."},
        {"role": "system", "content": "Scene."},
        {"role": "assistant", "content": "Greeting."},
        {"role": "assistant", "content": "More."},
    ]
    assert folded(chat) == [
        {"role": "user", "content": "Rules.\n\nScene."},
        {"role": "assistant", "content": "Greeting.\n\nMore."},
    ]
    assert folded([{"role": "assistant", "content": "Hi"}])[0] == {"role": "user", "content": ""}


def test_a_tokenizer_config_in_its_string_and_list_forms():
    source = (HERE / "llama3.jinja").read_text()
    plain = parse_tokenizer_config({
        "chat_template": source, "bos_token": "<|begin_of_text|>",
        "eos_token": {"content": "<|eot_id|>", "lstrip": False}, "model_max_length": 8192,
    })  # fmt: skip
    assert plain.template == source and plain.eos_token == "<|eot_id|>"
    assert plain.bos_token == "<|begin_of_text|>"
    listed = parse_tokenizer_config({
        "chat_template": [{"name": "tool_use", "template": "{{ 1/0 }}"},
                          {"name": "default", "template": source}],
        "eos_token": None,
    })  # fmt: skip
    assert listed.template == source and listed.eos_token == ""


@pytest.mark.parametrize(
    "raw, field, said",
    [
        ({"chat_template": "{% for m in messages %}"}, "chat_template", "does not parse"),
        ({"chat_template": "{{ raise_exception('no') }}"}, "chat_template", "refused the chat"),
        ({"chat_template": "{{ messages.pop() }}"}, "chat_template", "failed"),
        ({"chat_template": "{{ messages.__class__.__mro__ }}"}, "chat_template", "failed"),
        ({"chat_template": ""}, "chat_template", "template text"),
        ({"chat_template": 5}, "chat_template", "template text"),
        ({"chat_template": [{"name": "x"}]}, "chat_template", "lists no"),
        ({"chat_template": "x" * 100_001}, "chat_template", "longer than"),
        ({"chat_template": "{{ 1 }}", "eos_token": 3}, "eos_token", "must be a string"),
        ({"chat_template": "{{ 1 }}", "bos_token": {"content": ["x"]}}, "bos_token", "string"),
        ({"chat_template": "{{ 1 }}", "name": 3}, "name", "must be a string"),
    ],
)
def test_a_template_that_cannot_be_used_is_a_coded_error_naming_the_field(raw, field, said):
    with pytest.raises(TemplateError) as caught:
        parse_tokenizer_config(raw)
    assert caught.value.code == "instruct_template_invalid"
    assert caught.value.details == {"field": field} and said in caught.value.message


HOSTILE = {
    "nested loops": "{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}"
    "{% endfor %}",
    "a huge repeat": "{{ 'x' * 1000000000 }}",
    "a huge power": "{{ 9 ** (9 ** 9) }}",
    "endless recursion": "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    "a huge output": "{% for a in range(99999) %}{{ messages|tojson }}{% endfor %}",
    "doubling with ~": "{% set ns = namespace(s='x') %}{% for a in range(99) %}"
    "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "doubling with +": "{% set ns = namespace(s='x') %}{% for a in range(99) %}"
    "{% set ns.s = ns.s + ns.s %}{% endfor %}",
    "doubling with join": "{% set ns = namespace(s='x') %}{% for a in range(99) %}"
    "{% set ns.s = [ns.s, ns.s]|join %}{% endfor %}",
    "growing replace": "{% set ns = namespace(s='xy') %}{% for a in range(99) %}"
    "{% set ns.s = ns.s.replace('x', ns.s) %}{% endfor %}",
    "a wide center": "{{ 'x'.center(999999999) }}",
    "a wide filter": "{{ 'x'|center(999999999) }}",
    "a wide format": "{{ '{:>999999999}'.format(1) }}",
    "a wide %": "{{ '%999999999s' % 1 }}",
    "a wide format filter": "{{ '%-999999999s'|format(1) }}",
    "a wide % from its values": "{{ '%*s' % (999999999, 1) }}",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_template_ends_within_its_budget_with_a_coded_error(name):
    with pytest.raises(TemplateError) as caught:
        checked(JinjaTemplate(HOSTILE[name]))
    assert caught.value.details == {"field": "chat_template"}
    assert caught.value.message.startswith("chat_template")


def test_the_template_globals_and_filters_of_hugging_face():
    source = (
        "{%- generation -%}{{ bos_token }}{%- endgeneration -%}"
        "{% for m in messages %}{% if loop.index > 2 %}{% break %}{% endif %}"
        "{{ m | tojson }}{% endfor %}{{ strftime_now('%Y') | length }}"
    )
    text = render_prompt(checked(JinjaTemplate(source, bos_token="<b>")),
                         [{"role": "user", "content": "héllo"}])  # fmt: skip
    assert text == '<b>{"role": "user", "content": "héllo"}4'


def test_big_numbers_may_be_joined_and_shown():
    source = (
        "{{ 'id-' ~ 123456789 }} {{ '%d'|format(123456789) }}{{ messages|length }}"
        "{{ ' {}'.format(123456789) }} {{ 1000 * 1000 }} {{ 2 ** 64 }}"
    )
    with pytest.raises(TemplateError, match="a number above"):
        checked(JinjaTemplate("{{ '%*s'|format(999999999, 1) }}"))
    with pytest.raises(TemplateError, match="a number above"):
        checked(JinjaTemplate("{{ '{:>{}}'.format(1, 999999999) }}"))
    assert render_prompt(checked(JinjaTemplate(source)), CHAT) == (
        "id-123456789 1234567894 123456789 1000000 18446744073709551616"
    )
