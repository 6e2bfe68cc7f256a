"""The Actor prompt a conversation's next turn would send, without a turn: the preset
editor's live preview.

It reads the context exactly as a ``chat`` turn does (``context.load_context`` with every
plug-in's ``read`` hook, the worldbook's selection included) and assembles it with
``context.actor_prompt``, with a preset the caller supplies (the editor's unsaved prompts)
and a sample player message. Nothing is written: hooks get ``record=False`` (the worldbook
reads the conversation's timed effects without advancing them), and the turn is an unsaved
row whose id seeds ``{{random}}`` and ``{{roll}}`` from the conversation, so previewing
twice shows the same expansion. Pre-Actor phases are not run (they may call models): their
blocks are missing from a preview, and the preview says so.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from console.tokens import TOKENIZER_NAME, TokenCounter
from roleplay.models import Conversation, Turn, TurnKind
from roleplay.prompting.assembly import AssembledPrompt
from roleplay.prompting.presets import LoadedPreset

from .context import actor_prompt, load_context
from .plugin import PLUGINS

SAMPLE_INPUT = "(the player's next message)"


@dataclass(frozen=True)
class PreviewMessage:
    role: str
    source: str
    tokens: int
    content: str
    # (label, tokens) of each block the message was joined from, when it was joined.
    blocks: tuple[tuple[str, int], ...] = ()
    # For each piece (one, or each block joined), whether it stays the same next turn, and
    # the piece the stable prefix ends before when it ends inside this message.
    stable: tuple[bool, ...] = (True,)
    prefix_ends_at: int | None = None

    @property
    def stability(self) -> str:
        """``stable``, ``per turn``, ``stable, then per turn`` (a joined message the stable
        prefix ends inside) or ``partly per turn`` (one after the prefix ended)."""
        if all(self.stable):
            return "stable"
        if not any(self.stable):
            return "per turn"
        return "stable, then per turn" if self.prefix_ends_at is not None else "partly per turn"

    @property
    def block_rows(self) -> list[tuple[str, int, str, bool]]:
        """(label, tokens, stable or per turn, whether the stable prefix ends before it)
        of each block joined into the message."""
        return [
            (label, tokens, "stable" if ok else "per turn", i == self.prefix_ends_at)
            for i, ((label, tokens), ok) in enumerate(zip(self.blocks, self.stable, strict=True))
        ]

    @property
    def parts(self) -> list[str]:
        """What the message is made of, readably: ``main``, ``worldbook: lighthouse``..."""
        return [_label(part) for part in self.source.split("+")]


def _blocks(pieces, tokens: TokenCounter) -> tuple[tuple[str, int], ...]:
    if len(pieces) < 2:
        return ()
    empty = tokens.count_messages([])
    return tuple((_label(source), tokens.count_messages([m]) - empty) for source, m in pieces)


def _label(source: str) -> str:
    kind, _, rest = source.partition(":")
    if kind == "prompt":
        return rest
    if kind == "block":  # block:<book id>:<revision>:<entry id>, or a phase's own block id
        return f"worldbook: {rest.rsplit(':', 1)[-1]}" if rest.count(":") >= 2 else rest
    return source.replace("_", " ")


@dataclass
class PromptPreview:
    messages: list[PreviewMessage]
    prompt: AssembledPrompt
    worldbook: dict[str, Any] = field(default_factory=dict)
    skipped_phases: list[str] = field(default_factory=list)
    # The message the stable prefix ends before (None: inside a message, or the whole
    # prompt is stable) and the tokens of the stable prefix.
    prefix_ends_before: int | None = None
    stable_tokens: int = 0
    # What counted its tokens: the model config's tokenizer (``cl100k_base`` by default).
    tokenizer: str = TOKENIZER_NAME


def preview_prompt(
    conversation: Conversation, preset: LoadedPreset, user_input: str = ""
) -> PromptPreview:
    """The messages the next turn of ``conversation`` would send with ``preset``; raises
    what a turn would fail with (``ContextOverflow``, a missing named prompt, a worldbook
    error)."""
    turn = Turn(
        id=uuid.uuid5(uuid.NAMESPACE_URL, f"preview:{conversation.pk}"),
        tenant_id=conversation.tenant_id,
        conversation=conversation,
        kind=TurnKind.CHAT,
        client_message_id="preview",
        user_message_id=uuid.uuid4(),
    )
    ctx = load_context(turn, user_input.strip() or SAMPLE_INPUT, preset=preset, record=False)
    prompt = actor_prompt(ctx)
    messages, left, ends_before = [], prompt.stable_prefix_pieces, None
    stable = iter(prompt.stable)
    for index, (m, part, pieces) in enumerate(
        zip(prompt.messages, prompt.parts, prompt.message_pieces(), strict=True)
    ):
        labels = tuple(next(stable) for _ in pieces)
        inside = left if 0 < left < len(pieces) else None
        if left == 0 and ends_before is None and not all(prompt.stable):
            ends_before = index
        left -= len(pieces)
        messages.append(
            PreviewMessage(
                m["role"],
                part.source,
                part.tokens,
                str(m.get("content") or ""),
                _blocks(pieces, ctx.tokens),
                labels,
                inside,
            )
        )
    skipped = [p.name for p in PLUGINS.stage("pre_actor", TurnKind.CHAT)]
    preview = PromptPreview(messages, prompt, ctx.trace.get("worldbook", {}), skipped)
    preview.prefix_ends_before = ends_before
    stable_prefix = prompt.stable_prefix()
    preview.stable_tokens = ctx.tokens.count_messages(stable_prefix) if stable_prefix else 0
    preview.tokenizer = ctx.tokens.name
    return preview
