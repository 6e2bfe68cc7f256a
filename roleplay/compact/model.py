"""Asking the compactor for a summary (seed 002, Compact): what a turn's compaction, the
background preparation and an operator's regenerate share. The messages go in the
scenario's ``inputProtocol`` (in segments for ``automemory_recursive_v1``, each folded into
the summary so far; the intermediate summaries are not saved); at most
``reliability.maxModelCalls`` answers per segment (default 2), a refused one told why, all
within ``reliability.maxCompactionMs`` (default 120 s). A request that would leave less than
``reliability.minGenerationTokens`` (default 256) of the compactor model's window for its
answer is not sent (``protocol.CandidateTooLarge``); the answer may use at most what is
left (and at most the model's own output limit)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from console.tokens import TokenCounter, count_tokens
from roleplay.compact.engine import checkpoint as cp
from roleplay.compact.engine import groups as grouping
from roleplay.compact.engine import protocol
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.tokenizers.counters import acounter_for
from roleplay.llm.types import ModelRequest
from roleplay.presets.roles import role_system
from roleplay.scenarios.config import Compact, Reliability

DEFAULT_RELIABILITY = Reliability()


def reliability(config: Compact) -> Reliability:
    """The scenario's ``reliability``, else the seed's defaults."""
    return config.reliability or DEFAULT_RELIABILITY


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
    deadline: float | None = None,
) -> dict:
    """:func:`summarise` with the ``compactor`` role prompt of ``model_config``'s preset;
    the ids of the model calls it made are added to ``call_ids`` (also when it fails)."""
    variables = {"characterName": character_name, "maxSummaryTokens": str(config.maxSummaryTokens)}
    system = role_system(model_config, "compactor", variables)
    gateway = Gateway(tenant, model_config, "compactor", turn_id=turn_id, run_db=run_db)
    try:
        return await summarise(
            gateway,
            config,
            system,
            speakers,
            earlier=earlier,
            latest=latest,
            on_refused=on_refused,
            deadline=deadline,
        )
    finally:
        if call_ids is not None:
            call_ids.extend(gateway.call_ids)


def deadline_of(config: Compact) -> float:
    """When the compaction's candidate stage must be over (``maxCompactionMs`` from now)."""
    return time.monotonic() + reliability(config).maxCompactionMs / 1000


async def summarise(
    gateway: Gateway,
    config: Compact,
    system: str,
    speakers: list[tuple[str, str]],
    *,
    earlier: str = "",
    latest: str | None = None,
    on_refused: Callable[[str], None] = lambda reason: None,
    deadline: float | None = None,
) -> dict:
    """The summary of ``earlier`` and ``speakers`` ((speaker, text), oldest first);
    ``latest`` is the user's latest message, context only; ``deadline`` (monotonic) when
    the whole compaction stage must be over (default: ``maxCompactionMs`` from now).
    Raises ``ModelError``, ``protocol.SummaryInvalid`` (``CandidateTooLarge`` before any
    call for a piece that does not leave ``minGenerationTokens``) or ``TimeoutError``."""
    limits = reliability(config)
    deadline = deadline if deadline is not None else deadline_of(config)
    pieces = [speakers]
    if config.recursive is not None:
        pieces = protocol.segments(speakers, config.recursive.segmentContentTokens, count_tokens)
    summary: dict = {}
    tokens = await acounter_for(gateway.config)  # the compactor model's window, its tokens
    for piece in pieces:
        user = protocol.render(config.inputProtocol, earlier, piece, latest)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        room = _room(gateway, messages, tokens)
        if room < limits.minGenerationTokens:
            raise protocol.CandidateTooLarge(limits.minGenerationTokens - room)
        left = max(deadline - time.monotonic(), 0.001)
        summary = await asyncio.wait_for(
            _ask(gateway, config, messages, limits.maxModelCalls, on_refused, tokens), left
        )
        earlier = cp.summary_text(summary)
    return summary


def _room(gateway: Gateway, messages: list[dict], tokens: TokenCounter) -> int:
    """The tokens left for the compactor's answer in its model's window."""
    return gateway.pconfig.context_limit - tokens.count_messages(messages)


async def _ask(
    gateway: Gateway,
    config: Compact,
    messages: list[dict],
    calls: int,
    on_refused: Callable[[str], None],
    tokens: TokenCounter,
) -> dict:
    problem = protocol.SummaryInvalid("no answer")
    for _ in range(calls):
        room = _room(gateway, messages, tokens)
        if room < 1:  # a refusal and its reason took the room the answer needs
            break
        result = await gateway.complete(
            ModelRequest(
                messages,
                response_format=protocol.response_format(config.outputFormat),
                temperature=0.2,
                max_tokens=min(gateway.pconfig.max_output_tokens, room),
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


@dataclass(frozen=True)
class Fold:
    """A candidate the compactor summarised: ``folded`` (the messages the summary adds),
    whether it continues the earlier summary (``chained``), the compressible messages
    newer than it kept verbatim (``rest``) and the uncovered ones older than it given up
    (``abandoned``: ``bounded_recent`` only; the earlier summary goes with them)."""

    summary: dict
    folded: list
    chained: bool
    rest: list
    abandoned: list


Ask = Callable[[list, bool, float], Awaitable[dict]]


async def fold(
    config: Compact,
    groups: Sequence[grouping.Group],
    ask_for: Ask,
    on_step: Callable[..., None] = lambda name, **detail: None,
) -> Fold:
    """Summarise the largest candidate of the compressible ``groups`` (oldest first) whose
    request leaves the compactor ``minGenerationTokens``: ``ask_for(messages, chained,
    deadline)`` asks the compactor (with the earlier summary when ``chained``). A candidate
    too large is made smaller by whole groups (off its newest end; ``bounded_recent`` off
    its oldest end, keeping the most recent history), at most ``maxCandidateAttempts``
    candidates within ``maxCompactionMs``: a candidate refused before any call costs no
    model call. Raises what ``ask_for`` raises (``CandidateTooLarge`` when no candidate
    fits)."""
    limits = reliability(config)
    recent = config.executionPolicy == "bounded_recent"
    deadline = deadline_of(config)
    candidate = list(groups)
    problem = protocol.CandidateTooLarge(0)
    for attempt in range(1, limits.maxCandidateAttempts + 1):
        start = len(groups) - len(candidate) if recent else 0
        messages = grouping.flat(candidate)
        try:
            summary = await ask_for(messages, start == 0, deadline)
        except protocol.CandidateTooLarge as exc:
            problem = exc
            on_step(
                "candidate_too_large", attempt=attempt, groups=len(candidate), excess=exc.excess
            )
            candidate = grouping.shrink(candidate, exc.excess, _group_tokens, recent=recent)
            if not candidate:
                break
            continue
        end = start + len(candidate)
        return Fold(
            summary=summary,
            folded=messages,
            chained=start == 0,
            rest=grouping.flat(groups[end:]),
            abandoned=grouping.flat(groups[:start]),
        )
    on_step("candidates_exhausted", attempts=attempt)
    raise problem


def _group_tokens(group: grouping.Group) -> int:
    return sum(count_tokens(m.content) for m in group.messages)


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
