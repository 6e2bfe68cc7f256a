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
from roleplay.agentic_gateway import role_system
from roleplay.compact import checkpoint as cp
from roleplay.compact import protocol
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest
from roleplay.selectors import model_configs_by_ref


def compactor_config(tenant_id, config: Compact):
    """The model config ``compactorModelConfigId`` names, or ``ModelError``
    (``model_config_missing``)."""
    ref = config.compactorModelConfigId
    found = model_configs_by_ref(tenant_id, [ref]).get(ref)
    if found is None:
        raise ModelError("model_config_missing", f"no model config {ref!r}", retryable=False)
    return found


async def ask(
    tenant,
    model_config,
    config: Compact,
    character_name: str,
    speakers: list[tuple[str, str]],
    *,
    earlier: str = "",
    latest: str | None = None,
    turn_id=None,
    run_db=None,
    call_ids: list | None = None,
    on_refused: Callable[[str], None] = lambda reason: None,
) -> dict:
    """:func:`summarise` with the ``compactor`` role prompt of ``model_config``'s preset;
    the ids of the model calls it made are added to ``call_ids`` (also when it fails)."""
    variables = {"characterName": character_name, "maxSummaryTokens": str(config.maxSummaryTokens)}
    system = role_system(model_config, "compactor", variables)
    gateway = Gateway(tenant, model_config, "compactor", turn_id=turn_id, run_db=run_db)
    try:
        return await summarise(
            gateway, config, system, speakers, earlier=earlier, latest=latest, on_refused=on_refused
        )
    finally:
        if call_ids is not None:
            call_ids.extend(gateway.call_ids)


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


def config_fingerprint(character, config: Compact) -> str:
    """The semantic fingerprint of a checkpoint made for ``character`` under ``config``: a
    checkpoint is continued from only under the same one (``checkpoint.verify``)."""
    return cp.config_fingerprint(
        character=str(character.pk),
        name=character.name,
        compactor=config.compactorModelConfigId,
        profile=config.profile,
        input=config.inputProtocol,
        output=config.outputFormat,
        max_summary=config.maxSummaryTokens,
    )


def verify(
    checkpoint: cp.Checkpoint, history, config: Compact, config_fp: str, ids=None
) -> cp.Verdict:
    """``checkpoint.verify`` under ``config``: the read-back check a turn and the
    pre-compaction share."""
    return cp.verify(
        checkpoint,
        history,
        config_fp=config_fp,
        output_format=config.outputFormat,
        max_summary_tokens=config.maxSummaryTokens,
        count_tokens=count_tokens,
        ids=ids,
    )


def audit(config: Compact, **details) -> dict:
    """The audit data of a summary the compactor wrote: its model config, prompt and token
    counter, and ``details`` (the turn, the model calls...)."""
    return {
        "compactor": config.compactorModelConfigId,
        "prompt": "compactor",
        "counter": "cl100k",
        **details,
    }
