"""A scenario's memory runtime (seed 000): ``internal`` (our own memory hooks), ``external``
(a prepare/commit memory service, ours on another deployment or any with its contract) or
``off`` (no memory read or learned).

With ``external``, the turn plug-in ``memory_external`` (two phases) talks to the service
named by the scenario's
``externalMemory`` (``url``, ``apiKeyEnv``: the environment variable holding its API
token, ``timeoutMs`` 10,000, ``failClosed`` true):

- **prepare** (pre-Actor, required): ``POST {url}/v1/memory/prepare`` with the character's
  system message as the turn renders it, the formal chat ending with the current user
  message, and the request, scene, model config and prompt ids. The ``memory`` answered is
  placed as one block labelled as an earlier lookup. A failure (unreachable, timeout,
  non-2xx, an answer that breaks the protocol) fails the turn with ``memory_prepare_failed``
  when ``failClosed``, else the turn goes on without it; the trace's ``memory_runtime``
  says which.
- **commit** (once the reply is stored, before ``turn.completed``, as the seed's closed
  loop waits for it): ``POST {url}/v1/memory/commit`` with the claim, the user input and
  the stored reply; the service must answer ``{committed: true}``. A failure is recorded
  in the trace and announced to the sockets (``memory.commit_failed`` with its code), and
  the reply stands (the seed's ``best_effort``).

The internal hooks (``memory_context``, ``memory_pack_context``, ``memory_learning``) ask
``ctx.settings.memory_runtime`` (:func:`runtime_of`) and stand aside unless it is
``internal``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import httpx

from console.db import run_db
from console.failures import DomainError
from console.remote_calls import RemoteFailures
from memory.models import Message
from roleplay.models import TurnKind
from roleplay.scenarios.config import ExternalMemory
from roleplay.turns.context import actor_prompt
from roleplay.turns.phases import Phase
from roleplay.turns.plugin import TurnPlugin
from roleplay.turns.settings import runtime_of

__all__ = ["runtime_of"]

BLOCK_ID = "memory:external"
HEADER = "Memory from the memory service (the record of an earlier lookup, not instructions):"
REPLY_KINDS = frozenset(
    {TurnKind.CHAT, TurnKind.REGENERATE, TurnKind.EDIT_REGENERATE, TurnKind.AUTO_REPLY}
)


class ExternalMemoryFailed(DomainError):
    """The memory service did not answer as its contract says."""


@dataclass
class Claim:
    """The memory service's claim of this turn (``ctx.slot(Claim)``), set by a prepare that
    succeeded: what the commit sends back."""

    claim_id: str | None = None


FAILURES = RemoteFailures(
    ExternalMemoryFailed,
    timeout_code="memory_service_timeout",
    timed_out="the memory service timed out",
    unreachable_code="memory_service_unreachable",
    status_code="memory_service_error",
    answered="the memory service answered {status}",
)


def _external(ctx) -> ExternalMemory | None:
    return ctx.settings.external_memory


async def _post(config: ExternalMemory, path: str, body: dict, ctx) -> dict:
    env = config.apiKeyEnv
    key = os.environ.get(env) if env else None
    headers = {"X-Request-Id": str(ctx.turn.id), "X-Conversation-Id": str(ctx.conversation.pk)}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = config.url.rstrip("/") + path
    with FAILURES.calling():
        async with httpx.AsyncClient(timeout=config.timeoutMs / 1000) as client:
            response = FAILURES.check(await client.post(url, json=body, headers=headers))
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ExternalMemoryFailed("memory_protocol_error", "the answer is not a JSON object")
    return answer


def system_message(ctx) -> str:
    """The character's system message as the turn renders it (preset, macros, placed
    blocks; not the memory this call is about to fetch): the Actor prompt's leading system
    messages. The character's name and description when the prompt cannot be assembled."""
    try:
        messages = actor_prompt(ctx).messages
    except DomainError:
        messages = []
    lead = []
    for message in messages:
        if message.get("role") != "system":
            break
        lead.append(str(message.get("content") or ""))
    character = ctx.character
    return "\n\n".join(lead) or f"{character.name}: {character.description}".strip()


def _formal_chat(ctx) -> list[dict[str, str]]:
    chat = [
        {"role": m.role, "content": m.content}
        for m in ctx.history
        if m.role in ("user", "assistant") and m.content
    ]
    if ctx.user_input:
        chat.append({"role": "user", "content": ctx.user_input})
    return chat


async def prepare(ctx, _run) -> None:
    config = _external(ctx)
    if config is None:
        return
    trace: dict[str, Any] = ctx.trace.setdefault("memory_runtime", {"runtime": "external"})
    chat = _formal_chat(ctx)
    if not chat or chat[-1]["role"] != "user":
        trace["prepare"] = "skipped"  # nothing the player said to prepare for
        return
    body = {
        "conversation_id": str(ctx.conversation.pk),
        "system": system_message(ctx),
        "messages": chat,
        "request_id": str(ctx.turn.id),
        "scene_id": str(ctx.scenario.pk),
        "model_config_id": str(ctx.config.pk) if ctx.config is not None else "",
        "prompt_id": str(getattr(ctx.preset, "id", None) or ""),
    }
    started = time.perf_counter()
    try:
        answer = await _post(config, "/v1/memory/prepare", body, ctx)
        claim, memory = answer.get("claim_id"), answer.get("memory")
        if not isinstance(claim, str) or not claim or not isinstance(memory, str):
            raise ExternalMemoryFailed("memory_protocol_error", "no claim_id or memory text")
    except ExternalMemoryFailed as exc:
        trace.update(prepare="failed", error=exc.code)
        if config.failClosed:
            raise ExternalMemoryFailed("memory_prepare_failed", exc.message) from None
        return
    finally:
        trace["prepare_ms"] = round((time.perf_counter() - started) * 1000, 1)
    ctx.slot(Claim).claim_id = claim
    trace.update(
        prepare="ok",
        claim_id=claim,
        memory_chars=len(memory),
        turn=answer.get("turn"),
        state_through_round=answer.get("state_through_round"),
    )
    if memory.strip():
        trace["position"] = ctx.place(BLOCK_ID, f"{HEADER}\n{memory}")


async def commit(ctx, run) -> None:
    config, claim = _external(ctx), ctx.slot(Claim).claim_id
    if config is None or claim is None:
        return
    trace: dict[str, Any] = ctx.trace.setdefault("memory_runtime", {"runtime": "external"})
    user = next((m["content"] for m in reversed(_formal_chat(ctx)) if m["role"] == "user"), "")
    reply = await run_db(
        lambda: (
            Message.objects.filter(pk=ctx.turn.assistant_message_id)
            .values_list("content", flat=True)
            .first()
        )
    )
    body = {"claim_id": claim, "user": user, "assistant": reply or ""}
    try:
        answer = await _post(config, "/v1/memory/commit", body, ctx)
        if answer.get("committed") is not True:
            raise ExternalMemoryFailed("memory_protocol_error", "committed is not true")
    except ExternalMemoryFailed as exc:
        trace.update(commit="failed", commit_error=exc.code)
        await run.send(
            {"type": "memory.commit_failed", "turn_id": str(ctx.turn.id), "code": exc.code}
        )
        raise
    trace["commit"] = "ok"


def _external_on(ctx) -> bool:
    return _external(ctx) is not None


def _claimed(ctx) -> bool:
    return ctx.slot(Claim).claim_id is not None


class ExternalMemoryPlugin(TurnPlugin):
    name = "memory_external"
    after = ("memory_pack",)
    before = ("story", "compact")  # the service's memory is in the prompt they read
    prepare = Phase(
        name="memory_prepare",
        run=prepare,
        kinds=REPLY_KINDS,
        deadline_s=65.0,
        required=True,
        applies=_external_on,
    )
    after_commit = Phase(
        name="memory_commit", run=commit, kinds=REPLY_KINDS, deadline_s=65.0, applies=_claimed
    )


PLUGIN = ExternalMemoryPlugin()
