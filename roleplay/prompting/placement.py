"""Context placement: put context blocks at one of eight positions of a chat prompt.

The seed's ``placeContextBlocks`` / ``getPlacementCapabilities`` (spec 002, "上下文组装").
The caller has already chosen the blocks (worldbook entries, summaries, tool results); this
module only decides *where* each one goes and with which role, and says so in one
:class:`Placement` record per block. It calls no model, reads no database, counts no tokens:
the host counts and trims the result afterwards.

The host describes its messages with a :class:`Layout`; a position needs its part of it:

======================================  ================================================
``before_character`` / ``after_character``  ``character``: a half-open message range
``before_examples`` / ``after_examples``    ``examples``: a half-open message range
``at_depth``                                ``conversation``: the indices of the real chat
                                            history (never examples, notes or lore) and
                                            ``empty_index``, the insertion point when the
                                            history is empty
``author_note_top`` / ``author_note_bottom``  ``author_note``: the note's message index
``outlet``                                  ``outlets``: name -> index of the message that
                                            holds the ``{{outlet::name}}`` marker
======================================  ================================================

Rules, each pinned by a test:

- Depth: ``0`` goes after the last history message, ``d >= 1`` right before the ``d``-th
  message from the end, a depth beyond the history before the earliest history message; with
  no history every ``at_depth`` block goes to ``empty_index``.
- Inserted blocks become messages ``{"role": block.role, "content": text}``. Blocks at the same
  point follow ascending ``order``, ties by ``id`` (``at_depth`` blocks that share a point go
  deepest first).
- Region order wins where regions meet: at one insertion point the region that ends there
  comes first (``after_…``, or ``at_depth`` 0 after the last history message), then regions
  that are empty there (in the order character, examples, history; ``before_…`` then
  ``after_…``), then the region that starts there (``before_…``, or ``at_depth`` before a
  history message). A block of a smaller ``order`` cannot jump across a region boundary.
- Author's note and outlet blocks are merged into their host message and take its role:
  ``author_note_top`` blocks go above the note's text, ``author_note_bottom`` blocks below it
  (joined by newlines, by ``order`` then ``id``). Each declared outlet's marker must appear
  exactly once in its host (and in no other host); it is replaced by the outlet's blocks
  joined by newlines, or **by nothing when no block targets the outlet**, so a marker never
  reaches the model. Outlets are filled before the author's note is merged around the text.
- Errors, never silent drops: a position whose layout part is absent
  (``placement_anchor_missing``), a duplicate block id, a role other than system/user/assistant,
  an outlet marker inside a block's text (``placement_nested_outlet``: blocks are placed after
  markers are resolved, so a marker in a block would reach the model verbatim; this covers
  every position, not only outlets), a marker missing or repeated, a layout index out of range
  or regions that overlap.

``render_block`` (optional) formats a block's text for every position, inserted or merged;
the default is the block's ``content``. Everything else about messages (ids, names, extra
keys) is carried through untouched.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NoReturn

from console.failures import BadRequest, DomainError, Invalid
from roleplay.prompting.syntax import outlet_markers
from worldbook.engine.schema import POSITIONS, Position, Role

ROLES: tuple[str, ...] = ("system", "user", "assistant")
SEPARATOR = "\n"

# Stable error codes.
ANCHOR_MISSING = "placement_anchor_missing"
DUPLICATE_BLOCK_ID = "placement_duplicate_block_id"
ILLEGAL_ROLE = "placement_illegal_role"
NESTED_OUTLET = "placement_nested_outlet"
OUTLET_MARKER_MISSING = "placement_outlet_marker_missing"
OUTLET_MARKER_DUPLICATE = "placement_outlet_marker_duplicate"
LAYOUT_OUT_OF_RANGE = "placement_layout_out_of_range"
LAYOUT_INVALID = "placement_layout_invalid"
INVALID_BLOCK = "placement_invalid_block"
INVALID_MESSAGE = "placement_invalid_message"


class PlacementFailure(DomainError):
    """Base of what :func:`place_context_blocks` raises; ``details`` are JSON-safe."""


class PlacementError(PlacementFailure, Invalid):
    """The blocks cannot be placed as asked (422): a missing anchor, a duplicate id, an illegal
    role, a nested outlet, an outlet marker missing or repeated."""


class PlacementInputError(PlacementFailure, BadRequest):
    """The layout, a block or a host message is malformed (400): the host's bug."""


@dataclass(frozen=True)
class Span:
    """Messages ``start`` (included) to ``end`` (excluded); ``start == end`` is an empty region
    that still has a place (its ``before_``/``after_`` blocks go there)."""

    start: int
    end: int


@dataclass(frozen=True)
class History:
    """The real chat history: ``message_indices`` ascending, ``empty_index`` the insertion point
    (0..len(messages)) used when there is none."""

    message_indices: tuple[int, ...]
    empty_index: int


@dataclass(frozen=True)
class Layout:
    """Which regions the host's messages have; an absent part disables its positions."""

    character: Span | None = None
    examples: Span | None = None
    conversation: History | None = None
    author_note: int | None = None
    outlets: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "outlets", MappingProxyType(dict(self.outlets)))


@dataclass(frozen=True)
class Block:
    """One piece of context to place. ``outlet_name`` is used by ``position="outlet"`` only
    (surrounding white space is dropped, as in the marker); ``depth`` by ``at_depth`` only."""

    id: str
    position: Position
    content: str
    order: int = 0
    depth: int = 0
    role: Role = "system"
    outlet_name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            _bad_block(self, "id must be a non-empty string")
        if self.position not in POSITIONS:
            _bad_block(self, f"unknown position {self.position!r}")
        if not isinstance(self.content, str):
            _bad_block(self, "content must be a string")
        for name in ("order", "depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                _bad_block(self, f"{name} must be an integer")
        if self.depth < 0:
            _bad_block(self, "depth must not be negative")
        if self.role not in ROLES:
            raise PlacementError(
                ILLEGAL_ROLE,
                f"block {self.id!r} has role {self.role!r}; expected one of {', '.join(ROLES)}",
                {"block_id": self.id, "role": str(self.role)},
            )
        if isinstance(self.outlet_name, str):
            object.__setattr__(self, "outlet_name", self.outlet_name.strip() or None)
        elif self.outlet_name is not None:
            _bad_block(self, "outlet_name must be a string")
        if self.position == "outlet" and self.outlet_name is None:
            _bad_block(self, "a block placed at an outlet needs outlet_name")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Block:
        """A block from a dict such as the worldbook's selected blocks; other keys (title,
        reason, book ids) are left out."""
        known = ("id", "position", "content", "order", "depth", "role", "outlet_name")
        return cls(**{key: data[key] for key in known if key in data})


@dataclass(frozen=True)
class Placement:
    """Where one block went: ``message_index`` in the output messages, the role it is read
    with, and whether it is a message of its own (``merged=False``) or part of a host's."""

    block_id: str
    position: Position
    message_index: int
    role: str
    merged: bool
    outlet_name: str | None = None


@dataclass(frozen=True)
class PlacementResult:
    """The new messages (shallow copies; the input is never changed) and one record per block,
    in the order the blocks were given."""

    messages: tuple[dict[str, Any], ...]
    placements: tuple[Placement, ...]


def _bad_block(block: Block, message: str) -> NoReturn:
    block_id = block.id if isinstance(block.id, str) else repr(block.id)
    raise PlacementInputError(
        INVALID_BLOCK, f"block {block_id!r}: {message}", {"block_id": block_id}
    )


def placement_capabilities(layout: Layout) -> tuple[str, ...]:
    """The positions this layout can host, as the worldbook's ``placement_capabilities``
    strings: positions in the worldbook's order, then ``outlet:NAME`` by name.

    Reads the declared layout only; indices and markers are checked when placing.
    """
    present = {
        "before_character": layout.character is not None,
        "after_character": layout.character is not None,
        "at_depth": layout.conversation is not None,
        "before_examples": layout.examples is not None,
        "after_examples": layout.examples is not None,
        "author_note_top": layout.author_note is not None,
        "author_note_bottom": layout.author_note is not None,
        "outlet": False,
    }
    return tuple(p for p in POSITIONS if present[p]) + tuple(
        f"outlet:{name}" for name in sorted(layout.outlets)
    )


# --- insertion points -----------------------------------------------------------------------

# Regions in their natural prompt order, and the phases of one insertion point.
CHARACTER, EXAMPLES, HISTORY = 0, 1, 2
CLOSING, EMPTY, OPENING = 0, 1, 2

_SPAN_SIDES: dict[str, tuple[str, int, bool]] = {
    "before_character": ("character", CHARACTER, False),
    "after_character": ("character", CHARACTER, True),
    "before_examples": ("examples", EXAMPLES, False),
    "after_examples": ("examples", EXAMPLES, True),
}
_MERGED: frozenset[str] = frozenset({"author_note_top", "author_note_bottom", "outlet"})

SlotKey = tuple[int, int, int, int, int, int, str]


def insertion_key(block: Block, layout: Layout) -> SlotKey:
    """``(gap, phase, region, side, -depth, order, id)``: ``gap`` is the index of the input
    message the block goes before (``len(messages)`` for the end); the rest orders blocks that
    share a gap (see "Region order wins" in the module docstring)."""
    if block.position == "at_depth":
        history = layout.conversation
        assert history is not None
        indices, depth = history.message_indices, block.depth
        if not indices:
            slot = (history.empty_index, EMPTY, HISTORY, 0)
        elif depth == 0:
            slot = (indices[-1] + 1, CLOSING, HISTORY, 0)
        else:
            slot = (indices[max(len(indices) - depth, 0)], OPENING, HISTORY, 0)
        return (*slot, -depth, block.order, block.id)
    part, region, after = _SPAN_SIDES[block.position]
    span = getattr(layout, part)
    if span.start == span.end:
        slot = (span.start, EMPTY, region, int(after))
    elif after:
        slot = (span.end, CLOSING, region, 0)
    else:
        slot = (span.start, OPENING, region, 0)
    return (*slot, 0, block.order, block.id)


# --- the engine -----------------------------------------------------------------------------


def place_context_blocks(
    messages: Sequence[Mapping[str, Any]],
    layout: Layout,
    blocks: Sequence[Block],
    *,
    render_block: Callable[[Block], str] | None = None,
) -> PlacementResult:
    """Place every block or raise; see the module docstring for the rules."""
    check_layout(layout, len(messages))
    texts = _block_texts(blocks, layout, render_block)
    hosts = _merged_hosts(messages, layout, blocks, texts)

    keyed = sorted((insertion_key(b, layout), b) for b in blocks if b.position not in _MERGED)
    by_gap: dict[int, list[Block]] = defaultdict(list)
    for key, block in keyed:
        by_gap[key[0]].append(block)

    out: list[dict[str, Any]] = []
    where: dict[str, Placement] = {}
    for gap in range(len(messages) + 1):
        for block in by_gap.get(gap, ()):
            where[block.id] = Placement(block.id, block.position, len(out), block.role, False)
            out.append({"role": block.role, "content": texts[block.id]})
        if gap == len(messages):
            break
        message = dict(messages[gap])
        if gap in hosts:
            message["content"], merged = hosts[gap]
            for block in merged:
                where[block.id] = Placement(
                    block.id,
                    block.position,
                    len(out),
                    str(message.get("role")),
                    True,
                    block.outlet_name if block.position == "outlet" else None,
                )
        out.append(message)
    return PlacementResult(tuple(out), tuple(where[b.id] for b in blocks))


def check_layout(layout: Layout, count: int) -> None:
    """Every index in range, the history ascending, and no two regions overlapping."""

    def within(value: object, high: int, part: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
            raise PlacementInputError(
                LAYOUT_OUT_OF_RANGE,
                f"layout {part} = {value!r} is outside 0..{high} ({count} messages)",
                {"part": part, "value": value if isinstance(value, int) else repr(value)},
            )

    spans: list[tuple[str, Span]] = []
    for part in ("character", "examples"):
        span = getattr(layout, part)
        if span is None:
            continue
        within(span.start, count, f"{part}.start")
        within(span.end, count, f"{part}.end")
        if span.start > span.end:
            _layout_invalid(f"{part} starts after it ends", part)
        spans.append((part, span))

    def outside(point: int, part: str, *, gap: bool) -> None:
        """A message (or, with ``gap``, an insertion point) must not fall inside a region."""
        for name, span in spans:
            if span.start < point < span.end or (not gap and point == span.start < span.end):
                _layout_invalid(f"{part} falls inside the {name} region", part)

    if len(spans) == 2:
        first, second = sorted((span.start, span.end) for _, span in spans)
        if first[1] > second[0]:  # an empty region strictly inside the other counts too
            _layout_invalid("the character and examples regions overlap", "examples")
    if layout.conversation is not None:
        indices = layout.conversation.message_indices
        for i, index in enumerate(indices):
            within(index, count - 1, "conversation.message_indices")
            if i and index <= indices[i - 1]:
                _layout_invalid("history indices must be strictly ascending", "conversation")
            outside(index, "conversation.message_indices", gap=False)
        within(layout.conversation.empty_index, count, "conversation.empty_index")
        outside(layout.conversation.empty_index, "conversation.empty_index", gap=True)
    if layout.author_note is not None:
        within(layout.author_note, count - 1, "author_note")
    for name, index in layout.outlets.items():
        if not isinstance(name, str) or not name or name != name.strip():
            _layout_invalid(
                f"outlet name {name!r} must be non-empty, without outer spaces", "outlets"
            )
        within(index, count - 1, f"outlets.{name}")


def _layout_invalid(message: str, part: str) -> NoReturn:
    raise PlacementInputError(LAYOUT_INVALID, message, {"part": part})


def _block_texts(
    blocks: Sequence[Block], layout: Layout, render: Callable[[Block], str] | None
) -> dict[str, str]:
    """Each block's text, after checking ids, anchors and nested markers."""
    for block in blocks:
        if not isinstance(block, Block):
            raise PlacementInputError(
                INVALID_BLOCK, f"expected a Block, got {type(block).__name__}", {}
            )
    repeated = sorted(i for i, n in Counter(b.id for b in blocks).items() if n > 1)
    if repeated:
        raise PlacementError(
            DUPLICATE_BLOCK_ID,
            f"duplicate block ids: {', '.join(repeated)}",
            {"block_ids": repeated},
        )
    capabilities = set(placement_capabilities(layout))
    missing = [
        {"block_id": b.id, "position": b.position, "needs": _capability(b)}
        for b in blocks
        if _capability(b) not in capabilities
    ]
    if missing:
        needs = ", ".join(sorted({str(item["needs"]) for item in missing}))
        raise PlacementError(
            ANCHOR_MISSING, f"the layout has no place for: {needs}", {"blocks": missing}
        )
    texts: dict[str, str] = {}
    for block in blocks:
        text = block.content if render is None else render(block)
        if not isinstance(text, str):
            _bad_block(block, "render_block must return a string")
        nested = next(outlet_markers(text), None)
        if nested is not None:
            raise PlacementError(
                NESTED_OUTLET,
                f"block {block.id!r} contains the outlet marker {nested[1]!r}",
                {"block_id": block.id, "outlet_name": nested[1]},
            )
        texts[block.id] = text
    return texts


def _capability(block: Block) -> str:
    return f"outlet:{block.outlet_name}" if block.position == "outlet" else block.position


def _merged_hosts(
    messages: Sequence[Mapping[str, Any]],
    layout: Layout,
    blocks: Sequence[Block],
    texts: Mapping[str, str],
) -> dict[int, tuple[str, list[Block]]]:
    """Host message index -> (its new content, the blocks merged into it, in record order)."""
    by_slot: dict[tuple[str, str | None], list[Block]] = defaultdict(list)
    for block in sorted(blocks, key=lambda b: (b.order, b.id)):
        if block.position in _MERGED:
            slot = block.outlet_name if block.position == "outlet" else None
            by_slot[(block.position, slot)].append(block)

    def joined(position: str, slot: str | None = None) -> list[str]:
        return [texts[b.id] for b in by_slot.get((position, slot), ())]

    host_indices = set(layout.outlets.values())
    if layout.author_note is not None:
        host_indices.add(layout.author_note)
    content: dict[int, str] = {}
    for index in sorted(host_indices):
        text = messages[index].get("content")
        if not isinstance(text, str):
            raise PlacementInputError(
                INVALID_MESSAGE,
                f"message {index} hosts merged blocks but its content is not text",
                {"message_index": index},
            )
        content[index] = text
    _check_markers(content, layout.outlets)

    hosts: dict[int, tuple[str, list[Block]]] = {}
    for index, text in content.items():
        merged: list[Block] = []
        parts: list[str] = []
        pos = 0
        for marker, slot in outlet_markers(text):
            if layout.outlets.get(slot) == index:
                parts += [text[pos : marker.start], SEPARATOR.join(joined("outlet", slot))]
                pos = marker.end
                merged += by_slot.get(("outlet", slot), [])
        text = "".join(parts) + text[pos:]
        if index == layout.author_note:
            text = SEPARATOR.join([*joined("author_note_top"), text, *joined("author_note_bottom")])
            merged += by_slot.get(("author_note_top", None), [])
            merged += by_slot.get(("author_note_bottom", None), [])
        hosts[index] = (text, merged)
    return hosts


def _check_markers(content: Mapping[int, str], outlets: Mapping[str, int]) -> None:
    """Each declared outlet's marker exactly once in its host and in no other host."""
    seen: dict[str, Counter[int]] = defaultdict(Counter)
    for index, text in content.items():
        for _, slot in outlet_markers(text):
            seen[slot][index] += 1
    for name in sorted(outlets):
        host, found = outlets[name], seen.get(name, Counter())
        details = {"outlet_name": name, "message_index": host}
        if found[host] == 0:
            raise PlacementError(
                OUTLET_MARKER_MISSING,
                f"message {host} has no {{{{outlet::{name}}}}} marker",
                details,
            )
        elsewhere = sorted(i for i in found if i != host)
        if found[host] > 1 or elsewhere:
            raise PlacementError(
                OUTLET_MARKER_DUPLICATE,
                f"the {{{{outlet::{name}}}}} marker appears more than once",
                {**details, "count": found.total(), "other_message_indices": elsewhere},
            )
