"""The prompt compiler: the text a workflow's nodes offer the Actor, as system blocks in two
regions, ``foundation_context`` and ``turn_context`` (seed 002 lines 1412 and 1488,
``RPPromptCompiler``).

Only an output with ``prompt_content`` (non-blank) from a node whose ``project_to`` is not
``none`` becomes a block: a node's ``value`` and ``artifacts`` never reach a model. Blocks
are ordered by region (foundation first), then by plan order, never by which node finished
first, so the same outputs always compile to the same text. Each block's role is ``system``.

Sizes (characters, as the compiler has no tokenizer; the placement that takes the two
regions counts tokens): a block keeps at most :data:`MAX_BLOCK_CHARS` (a longer one is cut
and ends in ``…``), and all blocks together at most :data:`MAX_TOTAL_CHARS`: the block that
crosses the total is cut to what is left, and the blocks after it are dropped (their node
ids are in ``dropped``) once less than :data:`MIN_BLOCK_CHARS` is left. 6,000 characters is
about 1,500 tokens: room for a rule sheet or a scene requirement, not for a whole
document pasted by a tool; 16,000 in all keeps a workflow's part of the prompt under a
sixth of a 32k context. NULs and lone surrogates become U+FFFD (the text is stored with the
run and sent as JSON).

A failed workflow still compiles what its completed nodes offered; whether the turn uses it
is the caller's decision (a failed required node fails the turn before that).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from roleplay.frontloop.engine.text import clip

from .contracts import Plan, WorkflowResult

MAX_BLOCK_CHARS = 6_000
MAX_TOTAL_CHARS = 16_000
MIN_BLOCK_CHARS = 200  # below this, a cut block would say nothing: it is dropped instead

Region = Literal["foundation_context", "turn_context"]
REGIONS: tuple[Region, ...] = ("foundation_context", "turn_context")
_REGION: dict[str, Region] = {region: region for region in REGIONS}
_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class PromptBlock:
    """One node's text for the Actor, in its region."""

    region: Region
    content: str
    node_id: str
    capability: str
    role: Literal["system"] = "system"
    truncated: bool = False


@dataclass(frozen=True)
class CompiledContext:
    """The blocks in order, each region's text (its blocks joined by a blank line), and the
    nodes whose text did not fit."""

    blocks: tuple[PromptBlock, ...]
    foundation_context: str
    turn_context: str
    dropped: tuple[str, ...] = ()


def compile_context(plan: Plan, result: WorkflowResult) -> CompiledContext:
    """``result``'s prompt texts as blocks, by region then plan order, within the caps."""
    offered: list[tuple[int, int, PromptBlock]] = []
    for position, node in enumerate(plan.nodes):
        output = result.outputs.get(node.id)
        region = _REGION.get(node.project_to)
        if output is None or region is None:
            continue
        text = output.result.prompt_content
        if not isinstance(text, str) or not text.strip():
            continue
        text = text.strip()
        block = PromptBlock(
            region=region,
            content=clip(text, MAX_BLOCK_CHARS),
            node_id=node.id,
            capability=node.capability,
            truncated=len(text) > MAX_BLOCK_CHARS,
        )
        offered.append((REGIONS.index(region), position, block))
    offered.sort(key=lambda item: (item[0], item[1]))
    blocks: list[PromptBlock] = []
    dropped: list[str] = []
    left = MAX_TOTAL_CHARS
    for _, _, block in offered:
        if len(block.content) <= left:
            blocks.append(block)
            left -= len(block.content)
        elif left >= MIN_BLOCK_CHARS:
            cut = clip(block.content, left)
            blocks.append(
                PromptBlock(block.region, cut, block.node_id, block.capability, truncated=True)
            )
            left = 0
        else:
            dropped.append(block.node_id)
    return CompiledContext(
        blocks=tuple(blocks),
        foundation_context=_region(blocks, "foundation_context"),
        turn_context=_region(blocks, "turn_context"),
        dropped=tuple(dropped),
    )


def _region(blocks: list[PromptBlock], region: Region) -> str:
    return _SEPARATOR.join(block.content for block in blocks if block.region == region)
