"""A small Hugging Face ``tokenizer.json`` built here with the ``tokenizers`` package: a
word-level vocabulary split on whitespace and punctuation, so a text costs one token a word
(an unknown word is one ``[UNK]``), which differs from any BPE's count in a known way."""

from __future__ import annotations

from tokenizers import Tokenizer, models, pre_tokenizers

WORDS = ["the", "fog", "rolls", "in", "over", "lighthouse", "keeper", "."]


def word_level_json() -> str:
    vocab = {"[UNK]": 0, **{word: i + 1 for i, word in enumerate(WORDS)}}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer.to_str()


def words(text: str) -> int:
    """What the word-level tokenizer counts for ``text`` (words and punctuation runs)."""
    return len(pre_tokenizers.Whitespace().pre_tokenize_str(text))
