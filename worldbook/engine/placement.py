"""Where selected text can go, in what order, and how the aggregate ``context`` is wrapped.

The host declares which prompt regions it really has (``placement_capabilities``); an entry
aimed at a region the host lacks must not be silently moved somewhere else, because position
changes meaning (an author's note and the character card are read differently by the model).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from worldbook.engine.entry import Entry
from worldbook.engine.schema import POSITIONS
from worldbook.engine.tokens import Tokenizer

POSITION_RANK: dict[str, int] = {name: rank for rank, name in enumerate(POSITIONS)}
CONTEXT_OPEN = "<worldbook>"
CONTEXT_CLOSE = "</worldbook>"


def capability_for(entry: Entry) -> str | None:
    """The capability an entry needs: its position, or ``outlet:NAME`` (``None`` if unnamed)."""
    if entry.position == "outlet":
        return f"outlet:{entry.outlet_name}" if entry.outlet_name else None
    return entry.position


def placeable(entry: Entry, capabilities: frozenset[str]) -> bool:
    needed = capability_for(entry)
    return needed is not None and needed in capabilities


def block_sort_key(block: dict[str, Any], tier: int = 0) -> tuple[int, int, int, int, str, str]:
    """Assembly order: position (enum order), depth, ``order`` ascending, then the book's
    scope tier descending (``tier``, see ``engine.scopes``), then stable id.

    Ascending ``order`` follows SillyTavern: a higher order is inserted later, closer to the
    text the model reads last. At equal order SillyTavern places the entry it evaluated
    first (chat lore, then persona lore...) last, hence the descending tier.
    """
    return (
        POSITION_RANK[block["position"]],
        block["depth"],
        block["order"],
        -tier,
        block["book_id"],
        block["entry_id"],
    )


def escape_text(text: str) -> str:
    """Escape what would let content close or forge our wrapper tags."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_attr(text: str) -> str:
    return escape_text(text).replace('"', "&quot;")


def wrap_block(block_id: str, title: str, content: str) -> str:
    """One entry as it appears in ``context``; its token count is the entry's budget cost."""
    return (
        f'<worldbook_entry id="{escape_attr(block_id)}" title="{escape_attr(title)}">'
        f"{escape_text(content)}</worldbook_entry>"
    )


def build_context(wrapped_blocks: Iterable[str]) -> str:
    """The aggregate text: blocks joined by newlines inside one ``<worldbook>`` element.

    No blocks gives the empty string, so an empty selection costs zero tokens.
    """
    parts = list(wrapped_blocks)
    if not parts:
        return ""
    return CONTEXT_OPEN + "\n" + "\n".join(parts) + "\n" + CONTEXT_CLOSE


@lru_cache(maxsize=8)
def _join_costs(tokenizer: Tokenizer) -> tuple[int, int]:
    """(tokens of an empty wrapper, extra tokens a joining newline adds to a block)."""
    count = tokenizer.count
    empty = count(CONTEXT_OPEN + "\n" + CONTEXT_CLOSE)
    return empty, count(">\n") - count(">")


def context_tokens(block_tokens: Iterable[int], tokenizer: Tokenizer) -> int:
    """``count_tokens(build_context(blocks))`` from each wrapped block's own count, exactly.

    cl100k_base splits text into pieces with a regex and encodes each piece on its own, so a
    text's count is the sum over its pieces. Every wrapped block starts with
    ``<worldbook_entry`` and ends with ``>``; in the context the newline after a block joins
    that final ``>`` piece (``">\n"``) and nothing else changes, so the context costs the
    empty wrapper plus each block plus that join difference (0 for cl100k_base). A property
    test checks this against the tokenizer on arbitrary text.
    """
    counts = list(block_tokens)
    if not counts:
        return 0
    empty, join = _join_costs(tokenizer)
    return empty + sum(counts) + join * len(counts)
