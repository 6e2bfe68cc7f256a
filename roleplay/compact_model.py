"""Asking the compactor for a summary (seed 002, Compact): what a turn's compaction and an
operator's regenerate share. The messages go in the scenario's ``inputProtocol`` (in
segments for ``automemory_recursive_v1``, each folded into the summary so far; the
intermediate summaries are not saved); at most ``reliability.maxModelCalls`` answers per
segment (default 2), a refused one told why, all within ``reliability.maxCompactionMs``
(default 120 s)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from console.tokens import count_tokens
from roleplay.agentic.config import Compact
from roleplay.compact import checkpoint as cp
from roleplay.compact import protocol
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest


async def summarise(
    gateway: Gateway,
    config: Compact,
    system: str,
    speakers: list[tuple[str, str]],
    *,
    earlier: str = "",
    latest: str | None = None,
    on_refused: Callable[[str], None] = lambda reason: None,
) -> dict:
    """The summary of ``earlier`` and ``speakers`` ((speaker, text), oldest first);
    ``latest`` is the user's latest message, context only. Raises ``ModelError``,
    ``protocol.SummaryInvalid`` or ``TimeoutError``."""
    reliability = config.reliability
    calls = reliability.maxModelCalls if reliability else 2
    limit_s = (reliability.maxCompactionMs if reliability else 120_000) / 1000
    pieces = [speakers]
    if config.recursive is not None:
        pieces = protocol.segments(speakers, config.recursive.segmentContentTokens, count_tokens)
    started, summary = time.monotonic(), {}
    for piece in pieces:
        user = protocol.render(config.inputProtocol, earlier, piece, latest)
        left = max(limit_s - (time.monotonic() - started), 0.001)
        summary = await asyncio.wait_for(
            _ask(gateway, config, system, user, calls, on_refused), left
        )
        earlier = cp.summary_text(summary)
    return summary


async def _ask(
    gateway: Gateway,
    config: Compact,
    system: str,
    user: str,
    calls: int,
    on_refused: Callable[[str], None],
) -> dict:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    problem = protocol.SummaryInvalid("no answer")
    for _ in range(calls):
        result = await gateway.complete(
            ModelRequest(
                messages,
                response_format=protocol.response_format(config.outputFormat),
                temperature=0.2,
            )
        )
        try:
            return protocol.parse(
                result.content,
                config.outputFormat,
                max_tokens=config.maxSummaryTokens,
                length_policy=config.lengthPolicy,
                count_tokens=count_tokens,
            )
        except protocol.SummaryInvalid as exc:
            problem = exc
            on_refused(str(exc))
            messages = messages + [
                {"role": "assistant", "content": result.content[:4000]},
                {"role": "user", "content": f"Refused: {exc}. Write the summary again."},
            ]
    raise problem
