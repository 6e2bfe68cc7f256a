"""A GGUF file's chat template read by the pure header reader: the Gemma 3 template and its
BOS/EOS tokens from a written header, the bundled model's own file (a base model: no chat
template, a coded refusal), and any damaged header — truncated, huge lengths, wrong types —
a coded error, never another exception (Hypothesis)."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roleplay.llm.bundled import bundled_model_path, local_model_available
from roleplay.textgen.engine import TemplateError
from roleplay.textgen.engine.gguf import read_metadata, read_template, template_from_metadata
from roleplay.textgen.engine.jinja import render_prompt
from tests.textgen.gguf_files import gguf_bytes, raw_gguf

GEMMA3 = (Path(__file__).parent / "chat_templates" / "gemma3.jinja").read_text()
TOKENS = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"]
METADATA = {
    "general.architecture": "gemma3",
    "general.name": "Gemma 3 test",
    "tokenizer.ggml.model": "llama",
    "tokenizer.ggml.tokens": TOKENS,
    "tokenizer.ggml.scores": [0.0] * len(TOKENS),
    "tokenizer.ggml.bos_token_id": 2,
    "tokenizer.ggml.eos_token_id": 1,
    "tokenizer.ggml.add_bos_token": True,
    "tokenizer.chat_template": GEMMA3,
}
CHAT = [
    {"role": "system", "content": "You are Alice."},
    {"role": "user", "content": "Hi"},
]


def test_a_gguf_header_gives_its_chat_template_and_special_tokens(tmp_path):
    path = tmp_path / "gemma.gguf"
    path.write_bytes(gguf_bytes(METADATA) + b"\0" * 64)
    template = read_template(path)
    assert template.template == GEMMA3
    assert (template.bos_token, template.eos_token, template.name) == ("<bos>", "<eos>", "gemma")
    assert render_prompt(template, CHAT) == (
        "<bos><start_of_turn>user\nYou are Alice.\n\nHi<end_of_turn>\n<start_of_turn>model\n"
    )


@pytest.mark.skipif(not local_model_available(), reason="the bundled model is not installed")
def test_the_bundled_model_file_is_read_and_carries_no_chat_template():
    path = bundled_model_path()
    with open(path, "rb") as stream:
        metadata = read_metadata(stream)
    tokens = metadata["tokenizer.ggml.tokens"]
    assert tokens[metadata["tokenizer.ggml.bos_token_id"]] == "<bos>"
    assert tokens[metadata["tokenizer.ggml.eos_token_id"]] == "<eos>"
    assert "<start_of_turn>" in tokens and "<end_of_turn>" in tokens
    # gemma-3-270m is the base model: its file has no tokenizer.chat_template.
    with pytest.raises(TemplateError, match="carries no chat template"):
        read_template(path)
    # Given the Gemma 3 template, its own tokens make the turn markers.
    template = template_from_metadata({**metadata, "tokenizer.chat_template": GEMMA3})
    text = render_prompt(template, CHAT)
    assert text.startswith("<bos><start_of_turn>user\n") and text.endswith("<start_of_turn>model\n")


@pytest.mark.parametrize(
    "data, said",
    [
        (b"", "ends early"),
        (b"GGML" + b"\0" * 20, "does not start with GGUF"),
        (gguf_bytes({}, version=1), "version 1"),
        (raw_gguf(2**40), "keys"),
        (gguf_bytes({"a": "b"})[:-1], "ends early"),
        (raw_gguf(1, ("a", 99, b"")), "unknown value type"),
        (raw_gguf(1, ("a", 8, struct.pack("<Q", 2**40))), "a string of"),
        (raw_gguf(1, ("a", 9, struct.pack("<IQ", 8, 2**40))), "an array of"),
        (raw_gguf(1, ("a", 9, struct.pack("<IQ", 99, 1))), "unknown value type"),
        (raw_gguf(1, ("a", 8, struct.pack("<Q", 2) + b"\xff\xfe")), "not UTF-8"),
        (raw_gguf(1, ("a", 4, b"\0")), "ends early"),
        (gguf_bytes({"tokenizer.chat_template": 5}), "carries no chat template"),
        (gguf_bytes({"tokenizer.chat_template": "{% if %}"}), "does not parse"),
    ],
)
def test_a_damaged_header_is_a_coded_error(data, said):
    with pytest.raises(TemplateError, match=said) as caught:
        template_from_metadata(read_metadata(io.BytesIO(data)))
    assert caught.value.code == "instruct_template_invalid"


def test_a_missing_file_is_a_coded_error(tmp_path):
    with pytest.raises(TemplateError, match="cannot be opened"):
        read_template(tmp_path / "none.gguf")


WHOLE = gguf_bytes(METADATA)


@settings(max_examples=300, deadline=None)
@given(
    cut=st.integers(min_value=0, max_value=len(WHOLE)),
    flips=st.lists(st.tuples(st.integers(0, len(WHOLE) - 1), st.integers(0, 255)), max_size=4),
    tail=st.binary(max_size=32),
)
def test_any_damaged_header_is_read_or_refused_with_a_code(cut, flips, tail):
    data = bytearray(WHOLE[:cut] + tail)
    for index, value in flips:
        if index < len(data):
            data[index] = value
    try:
        template = template_from_metadata(read_metadata(io.BytesIO(bytes(data))))
    except TemplateError as exc:
        assert exc.code == "instruct_template_invalid"
        assert exc.details["field"] in ("gguf", "chat_template")
    else:
        assert template.template
