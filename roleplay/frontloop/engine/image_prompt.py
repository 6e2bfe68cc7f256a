"""The one tagged block an image-prompt producer writes, its parser, and what is drawn when
the producer fails (seed 002 lines 1254 and 1263).

The block::

    <image_prompt camera="close-up" aspect="3:4">Mira presses the brass key into the
    guard's open palm; torchlight, rain on the gate.</image_prompt>

- ``camera``: one of :data:`CAMERAS`; ``aspect``: one of :data:`ASPECTS`. Both optional (the
  image config's default size and a medium shot apply), each at most once; another
  attribute, or a value outside the lists, rejects the block with a reason.
- Tolerant of how models write: tag and attribute names in any case, blanks around ``=``
  and inside the tags, single or double quotes, ``Close Up`` / ``close_up`` for
  ``close-up``, ``16 : 9`` for ``16:9``; text around the block is ignored; the first block
  counts.
- Bounded: the description is 1–:data:`MAX_PROMPT_CHARS` characters (well under the image
  tool's 32,768 UTF-8 bytes); only the first :data:`MAX_SCAN_CHARS` of an answer are read,
  and the scan is linear (no backtracking over a hostile answer).

Degradation (:func:`choose_prompt`): the producer failed or wrote no valid block → an
image block already in the segment → else the segment's text, bounded; the choice records
its ``source`` and why it degraded. No second producer call is made (as the seed says).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from .text import clip

TAG = "image_prompt"
CAMERAS = (
    "extreme-close-up",
    "close-up",
    "medium",
    "full-body",
    "wide",
    "over-the-shoulder",
    "low-angle",
    "high-angle",
    "overhead",
)
ASPECTS = ("1:1", "3:4", "4:3", "2:3", "3:2", "16:9", "9:16")
MAX_PROMPT_CHARS = 4_000
MAX_SCAN_CHARS = 100_000
_ATTRIBUTES = ("camera", "aspect")

_OPEN = re.compile(r"<\s*image_prompt\b([^<>]{0,500})>", re.IGNORECASE)
_CLOSE = re.compile(r"<\s*/\s*image_prompt\s*>", re.IGNORECASE)
_ATTRIBUTE = re.compile(r"\s*([A-Za-z_][\w-]{0,40})\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+))")
_CAMERA_ALIASES = {"closeup": "close-up", "extreme-closeup": "extreme-close-up", "mid": "medium"}

Source = Literal["producer", "segment_block", "segment_text"]


@dataclass(frozen=True)
class ImagePrompt:
    """A description to draw, with its camera and aspect (None: the defaults)."""

    text: str
    camera: str | None = None
    aspect: str | None = None

    def block(self) -> str:
        """The prompt written back as one block (what is stored beside the image slot)."""
        attributes = "".join(
            f' {name}="{value}"'
            for name, value in (("camera", self.camera), ("aspect", self.aspect))
            if value is not None
        )
        return f"<{TAG}{attributes}>{self.text}</{TAG}>"


@dataclass(frozen=True)
class BlockRejected:
    """Why a text holds no usable block."""

    reason: str


def parse_block(text: object) -> ImagePrompt | BlockRejected:
    """The first ``<image_prompt …>…</image_prompt>`` block of ``text``, or why none."""
    if not isinstance(text, str):
        return BlockRejected("the answer is not text")
    scanned = text[:MAX_SCAN_CHARS]
    opening = _OPEN.search(scanned)
    if opening is None:
        return BlockRejected(f"no <{TAG}> block")
    closing = _CLOSE.search(scanned, opening.end())
    if closing is None:
        return BlockRejected(f"the <{TAG}> block is not closed")
    attributes = _attributes(opening.group(1))
    if isinstance(attributes, BlockRejected):
        return attributes
    body = scanned[opening.end() : closing.start()].strip()
    if not body:
        return BlockRejected("the block's description is empty")
    if len(body) > MAX_PROMPT_CHARS:
        return BlockRejected(f"the description is longer than {MAX_PROMPT_CHARS} characters")
    return ImagePrompt(
        text=clip(body, MAX_PROMPT_CHARS),
        camera=attributes.get("camera"),
        aspect=attributes.get("aspect"),
    )


def _attributes(raw: str) -> dict[str, str] | BlockRejected:
    found: dict[str, str] = {}
    position = 0
    for match in _ATTRIBUTE.finditer(raw):
        if raw[position : match.start()].strip():
            break
        position = match.end()
        name = match.group(1).lower()
        value = next(v for v in match.group(2, 3, 4) if v is not None)
        if name not in _ATTRIBUTES:
            return BlockRejected(f"unknown attribute {clip(name, 40)!r}")
        if name in found:
            return BlockRejected(f"the attribute {name} is given twice")
        checked = _camera(value) if name == "camera" else _aspect(value)
        if isinstance(checked, BlockRejected):
            return checked
        found[name] = checked
    rest = raw[position:].strip().rstrip("/").strip()
    if rest:
        return BlockRejected(f"cannot read the attributes {clip(rest, 60)!r}")
    return found


def _camera(value: str) -> str | BlockRejected:
    normal = re.sub(r"[\s_]+", "-", value.strip().lower())
    normal = _CAMERA_ALIASES.get(normal, normal)
    normal = normal.removesuffix("-shot")
    if normal not in CAMERAS:
        return BlockRejected(f"camera {clip(value, 40)!r} is not one of {', '.join(CAMERAS)}")
    return normal


def _aspect(value: str) -> str | BlockRejected:
    normal = re.sub(r"\s+", "", value)
    if normal not in ASPECTS:
        return BlockRejected(f"aspect {clip(value, 40)!r} is not one of {', '.join(ASPECTS)}")
    return normal


@dataclass(frozen=True)
class PromptChoice:
    """What is drawn for one image: ``prompt`` (None: nothing to draw), where it came from,
    and why it is not the producer's (``degraded``)."""

    prompt: ImagePrompt | None
    source: Source | None
    degraded: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "degraded": self.degraded,
            "prompt": None if self.prompt is None else self.prompt.block(),
        }


def choose_prompt(
    producer_answer: str | None, segment_text: str, *, producer_error: str | None = None
) -> PromptChoice:
    """The producer's block; else (it failed: ``producer_error`` or no valid block) the
    segment's own block; else the segment's text, bounded."""
    if producer_error is None and producer_answer is not None:
        parsed = parse_block(producer_answer)
        if isinstance(parsed, ImagePrompt):
            return PromptChoice(parsed, "producer")
        degraded = f"producer_invalid: {parsed.reason}"
    else:
        degraded = f"producer_failed: {clip(producer_error or 'no answer', 120)}"
    in_segment = parse_block(segment_text)
    if isinstance(in_segment, ImagePrompt):
        return PromptChoice(in_segment, "segment_block", degraded)
    plain = " ".join(_CLOSE.sub(" ", _OPEN.sub(" ", segment_text[:MAX_SCAN_CHARS])).split())
    if not plain:
        return PromptChoice(None, None, f"{degraded}; the segment has no text")
    return PromptChoice(ImagePrompt(clip(plain, MAX_PROMPT_CHARS)), "segment_text", degraded)
