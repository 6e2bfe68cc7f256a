"""The Actor's reply to a turn, streamed to the player: one segment (the direct generation),
or several when a plug-in drives the turn (its ``generate`` hook, the front tool loop), all
in one assistant message whose text is the segments' concatenation.

A segment assembles the Actor prompt (``context.actor_prompt``), streams the model's text
into the reply's ``parts`` as ``delta`` events whose ``seq`` runs on across segments, and
answers the plug-ins' tool calls between rounds (``plugin.answer_calls``). A segment after
the first goes on from the reply so far (the text streamed becomes the final assistant
message, continued), so the segments read as one reply; its ``separator`` is streamed
before its first text (a segment that streams nothing adds nothing), so the stored text is
what the player saw.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from console.db import run_db
from console.tokens import CL100K, TokenCounter
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.reasoning import joined
from roleplay.llm.speaker import SpeakerLabel
from roleplay.llm.types import CompletionResult, ModelRequest, StreamDone, TextDelta
from roleplay.prompting.assembly import AssembledPrompt
from roleplay.quotas.engine.periods import capped

from .context import TurnContext, actor_prompt
from .plugin import TOOL_ROUNDS, answer_calls, offered_tools

Emit = Callable[[dict], Awaitable[None]]
RENEW_EVERY = 10.0
USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens")


def prompt_trace(prompt: AssembledPrompt, tokens: TokenCounter = CL100K) -> dict:
    """What the console shows of the assembled prompt: each message's source and tokens,
    counted by ``tokens`` (the model config's tokenizer, which the trace names)."""
    trace = {
        "tokenizer": tokens.name,
        "messages": len(prompt.messages),
        "tokens": prompt.prompt_tokens,
        "budget": prompt.budget,
        "dropped_history": prompt.dropped_history,
        "parts": [[part.source, part.role, part.tokens] for part in prompt.parts],
        # What a model server can keep cached for the next turn (docs/prompt.md).
        "layout": prompt.layout,
        "stable_prefix_tokens": _tokens(prompt.stable_prefix(), tokens),
    }
    if prompt.anchors:  # where the per-turn blocks went, for the next turn
        trace["anchors"] = dict(prompt.anchors)
    for name in ("unavailable", "unknown_macros", "missing_variables"):
        if getattr(prompt, name):
            trace[name] = list(getattr(prompt, name))
    return trace


def _tokens(messages: list[dict], tokens: TokenCounter) -> int:
    """The messages' tokens, framing included, without the reply's priming."""
    return tokens.count_messages(messages) - tokens.count_messages([])


def usage_of(result: CompletionResult | None) -> dict:
    if result is None:
        return {}
    u = result.usage
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "total_tokens": u.total_tokens,
    }


@dataclass
class Segment:
    """What one Actor call gave: its text, its result (None when it ended without one)."""

    text: str
    result: CompletionResult | None


@dataclass
class Reply:
    """The assistant message being streamed (module doc). ``entered`` is called once, when
    the Actor is first asked; ``renew`` keeps the turn's lease while a long reply streams;
    the calls' ``ModelCall`` rows go to ``writes``, written with the reply."""

    ctx: TurnContext
    emit: Emit
    cancel: asyncio.Event
    parts: list[str]
    entered: Callable[[], None] = lambda: None
    renew: Callable[[], Awaitable[None]] | None = None
    writes: list | None = None
    segments: list[Segment] = field(default_factory=list)
    seq: int = 0
    # Where the segment streaming now began in ``parts`` (its text so far: ``current``).
    segment_start: int = 0
    _separator: str = ""
    # the reasoning a failed Actor call gave before it failed (``ModelError.partial_reasoning``)
    _failed_reasoning: str = ""
    _asked: bool = False
    _renewed: float = field(default_factory=time.monotonic)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def current(self) -> str:
        """What the segment streaming now (or the last one, if it failed) has streamed."""
        return "".join(self.parts[self.segment_start :])

    @property
    def result(self) -> CompletionResult | None:
        """The last segment's result (its model, attempts and finish reason)."""
        return self.segments[-1].result if self.segments else None

    @property
    def reasoning(self) -> str:
        """The model's scratchpad over every segment (a failed one's so far), kept beside
        the reply's text."""
        done = (s.result.reasoning for s in self.segments if s.result is not None)
        return joined(*done, self._failed_reasoning)

    def usage(self) -> dict:
        """The Actor's usage over every segment (the controller's calls are their own)."""
        total: dict = {}
        for segment in self.segments:
            for key, value in usage_of(segment.result).items():
                if value is not None:
                    total[key] = total.get(key, 0) + value
        return total

    async def send(self, text: str) -> None:
        self.parts.append(text)
        turn_id = str(self.ctx.turn.id)
        await self.emit({"type": "delta", "turn_id": turn_id, "seq": self.seq, "text": text})
        self.seq += 1

    async def segment(self, *, max_tokens: int | None = None, separator: str = "") -> Segment:
        """Stream one Actor call into the reply (at most ``max_tokens``, None: the config's);
        what it streamed and its result, also kept in :attr:`segments`."""
        ctx, turn = self.ctx, self.ctx.turn
        prompt = actor_prompt(ctx)
        ctx.trace["prompt"] = prompt_trace(prompt, ctx.tokens)
        gateway = Gateway(
            turn.tenant, ctx.config, "actor", turn_id=turn.id, run_db=run_db, writes=self.writes
        )
        tools, owners = offered_tools(ctx)
        messages = self._going_on(list(prompt.messages))
        request = ModelRequest(
            messages,
            tools=tools,
            max_tokens=capped(max_tokens, ctx.admission.max_reply_tokens),
            continue_final_message=ctx.continuing is not None or bool(self.parts),
            tolerate_missing_stream_metadata=ctx.tolerate_missing_stream_metadata,
            char_name=ctx.speaker.name,
            user_name=ctx.user_name,
        )
        # Only a new reply may open with the character's name as a label.
        fresh = ctx.continuing is None and not self.parts
        label = SpeakerLabel(ctx.speaker.name if fresh else None)
        if not self._asked:
            self._asked = True
            self.entered()
        self._separator = separator if self.parts else ""
        self.segment_start = len(self.parts)
        result = None
        for round_ in range(TOOL_ROUNDS + 1):
            try:
                async for event in gateway.stream(request, cancel=self.cancel):
                    await self._keep_lease()
                    if isinstance(event, TextDelta):
                        text = label.feed(event.text)
                        if text:
                            await self._send_text(text)
                    elif isinstance(event, StreamDone):
                        result = event.result
            except ModelError as exc:
                self._failed_reasoning = exc.partial_reasoning
                raise
            if not tools or result is None or not result.tool_calls:
                break
            messages = messages + await answer_calls(ctx, owners, result)
            last = round_ + 1 == TOOL_ROUNDS
            request = replace(request, messages=messages, tool_choice="none" if last else "auto")
        held = label.finish()
        if held:
            await self._send_text(held)
        segment = Segment(self.current, result)
        self.segments.append(segment)
        return segment

    async def _send_text(self, text: str) -> None:
        """Text of the segment streaming now, its separator first."""
        if self._separator:
            await self.send(self._separator)
            self._separator = ""
            self.segment_start = len(self.parts)
        await self.send(text)

    def _going_on(self, messages: list[dict]) -> list[dict]:
        """The prompt's messages, going on from the reply so far when there is one."""
        if not self.parts:
            return messages
        so_far = self.text
        last = messages[-1] if messages else None
        if self.ctx.continuing is not None and last is not None and last["role"] == "assistant":
            return [*messages[:-1], {**last, "content": last["content"] + so_far}]
        return [*messages, {"role": "assistant", "content": so_far}]

    async def _keep_lease(self) -> None:
        if self.renew is not None and time.monotonic() - self._renewed > RENEW_EVERY:
            self._renewed = time.monotonic()
            await self.renew()
