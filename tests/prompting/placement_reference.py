"""A deliberately plain placement, written from the rules rather than from the engine.

It walks the insertion points one by one and, at each, lists what happens there in words:
regions that close, regions that are empty there, regions that open; then the message, with
its outlets filled by ``str.replace`` and its author's note merged. No sort keys, no buckets.
It assumes valid input (the property tests generate only valid layouts, canonical markers
``{{outlet::name}}`` and texts without braces) and checks nothing.
"""

from __future__ import annotations

from typing import Any

from roleplay.prompting.placement import Block, Layout, Placement

REGIONS = ("character", "examples")


def reference_place(
    messages: list[dict[str, Any]], layout: Layout, blocks: list[Block]
) -> tuple[list[dict[str, Any]], list[Placement]]:
    out: list[dict[str, Any]] = []
    records: dict[str, Placement] = {}

    def at(position: str, **match: Any) -> list[Block]:
        found = [b for b in blocks if b.position == position]
        found = [b for b in found if all(getattr(b, k) == v for k, v in match.items())]
        return sorted(found, key=lambda b: (b.order, b.id))

    def emit(group: list[Block]) -> None:
        for block in group:
            records[block.id] = Placement(block.id, block.position, len(out), block.role, False)
            out.append({"role": block.role, "content": block.content})

    history = list(layout.conversation.message_indices) if layout.conversation else []

    def depth_target(block: Block) -> int:
        """The history message an at_depth block (depth >= 1) goes right before."""
        from_the_end = list(reversed(history))
        return from_the_end[block.depth - 1] if block.depth <= len(history) else history[0]

    def deepest_first(group: list[Block]) -> list[Block]:
        return sorted(group, key=lambda b: (-b.depth, b.order, b.id))

    for gap in range(len(messages) + 1):
        # Regions that end here.
        for name in REGIONS:
            span = getattr(layout, name)
            if span is not None and span.start < span.end == gap:
                emit(at(f"after_{name}"))
        if history and history[-1] + 1 == gap:
            emit(at("at_depth", depth=0))
        # Regions that are empty here.
        for name in REGIONS:
            span = getattr(layout, name)
            if span is not None and span.start == span.end == gap:
                emit(at(f"before_{name}"))
                emit(at(f"after_{name}"))
        if (
            layout.conversation is not None
            and not history
            and layout.conversation.empty_index == gap
        ):
            emit(deepest_first(at("at_depth")))
        # Regions that start here.
        for name in REGIONS:
            span = getattr(layout, name)
            if span is not None and gap == span.start < span.end:
                emit(at(f"before_{name}"))
        if gap in history:
            emit(
                deepest_first(
                    [b for b in at("at_depth") if b.depth >= 1 and depth_target(b) == gap]
                )
            )
        if gap == len(messages):
            break
        message = dict(messages[gap])
        merged: list[Block] = []
        for name, host in layout.outlets.items():
            if host == gap:
                group = at("outlet", outlet_name=name)
                text = "\n".join(b.content for b in group)
                message["content"] = message["content"].replace(f"{{{{outlet::{name}}}}}", text)
                merged += group
        if layout.author_note == gap:
            top, bottom = at("author_note_top"), at("author_note_bottom")
            message["content"] = "\n".join(
                [*(b.content for b in top), message["content"], *(b.content for b in bottom)]
            )
            merged += top + bottom
        for block in merged:
            records[block.id] = Placement(
                block.id,
                block.position,
                len(out),
                message["role"],
                True,
                block.outlet_name if block.position == "outlet" else None,
            )
        out.append(message)
    return out, [records[b.id] for b in blocks]
