"""Auto-reply suggestions (seed 002): three options for the user's next message after an
assistant reply. Writes no message and no state; each model call is a ``ModelCall`` row
with purpose ``auto_reply``.

The guidance is the turn-start state the reply's planning run recorded (the text the
Actor read). If that run is not there yet, the call waits for it up to ``wait_ms`` (default
the scenario's ``autoReplyWaitMs``; polled every 250 ms; 0 still reads once), then answers
503 ``turn_start_snapshot_not_ready`` (retryable). The model is asked at most three times
at temperature 0.7 (a content-filtered answer ends the attempts at once); valid options of
every attempt count together, and fewer than three after the last is 502
``auto_reply_failed``; there is no static fallback. The material carries the character's
name and description.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from console import failures
from console.db import run_db
from memory import selectors as message_reads
from roleplay.agentic import recorded
from roleplay.agentic.engine import autoreply
from roleplay.agentic.engine import inputs as agentic_inputs
from roleplay.errors import NotFound, RoleplayError
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest
from roleplay.models import Conversation, PlanningRun
from roleplay.players.selectors import persona_for
from roleplay.presets.roles import role_system
from roleplay.quotas.admission import admit_alone
from roleplay.scenarios.config import AgenticV2
from roleplay.scenarios.selectors import auto_reply_config, scenario_for, story_config
from roleplay.story_plugin.services import auto_reply as story_auto_reply

POLL_S = 0.25
READ_LIMIT = 200


class AutoReplyUnavailable(RoleplayError, failures.Invalid):
    """The conversation's scenario has no Agent V2 with an ``autoReply`` model config."""

    default_code = "auto_reply_not_configured"


class SnapshotNotReady(RoleplayError, failures.Unavailable):
    """The reply's planning run has not recorded its turn-start state yet (retryable)."""

    default_code = "turn_start_snapshot_not_ready"


class AutoReplyFailed(RoleplayError, failures.BadGateway):
    """The model gave fewer than three valid options in three attempts."""

    default_code = "auto_reply_failed"


def _setup(conversation: Conversation, message_id: str) -> dict:
    """Everything the call needs from the database, read once (before any wait). A Story
    conversation's call goes its own way (``story_auto_reply``), with the same
    ``agenticV2.modelConfigs.autoReply`` config (the seed: Story names its suggestion model
    there too, and without it the request is refused)."""
    scenario = scenario_for(conversation)
    if story_config(scenario) is not None:
        model_config = _model_config(conversation, _story_config(scenario))
        lines = message_reads.get_history_lines(
            conversation.tenant, conversation.session_id, READ_LIMIT
        )
        return story_auto_reply.setup(conversation, model_config, message_id, lines)
    config = auto_reply_config(scenario)
    model_config = _model_config(conversation, config)
    assert config is not None
    lines = message_reads.get_history_lines(
        conversation.tenant, conversation.session_id, READ_LIMIT
    )
    index = next(
        (i for i, row in enumerate(lines) if str(row[0]) == message_id and row[2] == "assistant"),
        None,
    )
    if index is None:
        raise NotFound(message="no such assistant message in this conversation")
    visible = [
        (row[2], row[3])
        for row in lines[: index + 1]
        if row[2] in ("user", "assistant") and row[3].strip()
    ]
    return {
        "config": config,
        "model_config": model_config,
        "messages": visible[-(autoreply.CONTEXT_MESSAGES + 1) :],
        "user": persona_for(conversation).name,
        "character": conversation.character.name,
        "description": conversation.character.description,
        "tenant": conversation.tenant,
    }


def _story_config(scenario) -> AgenticV2 | None:
    """A Story scenario's ``agenticV2`` when it names an ``autoReply`` config: Story runs
    instead of Agent V2, so whether Agent V2 is on does not matter here."""
    if not scenario.agentic_v2:
        return None
    config = AgenticV2.model_validate(scenario.agentic_v2, strict=False)
    return config if config.modelConfigs.autoReply else None


def _model_config(conversation: Conversation, config: AgenticV2 | None):
    """The ``autoReply`` model config; :class:`AutoReplyUnavailable` without one."""
    if config is None:
        raise AutoReplyUnavailable(
            message="the conversation's scenario has no Agent V2 auto-reply model config"
        )
    ref = config.modelConfigs.autoReply
    model_config = model_configs_by_ref(conversation.tenant_id, [ref]).get(ref)
    if model_config is None:
        raise AutoReplyUnavailable(message=f"no model config {ref!r} for autoReply")
    return model_config


def _guidance(conversation: Conversation, message_id: str) -> str | None:
    run = (
        PlanningRun.objects.filter(
            tenant_id=conversation.tenant_id,
            conversation=conversation,
            assistant_message_id=message_id,
        )
        .order_by("-created_at")
        .only("tenant_id", "conversation_id", "scenario_id", "snapshot")
        .first()
    )
    return None if run is None else agentic_inputs.recorded_guidance(recorded.restore(run).snapshot)


async def suggest(
    conversation: Conversation,
    *,
    message_id: str,
    language: str,
    wait_ms: int | None = None,
    db: Callable[..., Awaitable[Any]] = run_db,
) -> dict:
    """``{options: [three strings], usage}`` for the reply ``message_id``. ``db`` runs the
    database work: the socket's pool of threads by default; a sync view passes
    ``sync_to_async`` so it stays on the view's thread and transaction."""
    setup = await db(_setup, conversation, message_id)
    await db(admit_alone, conversation)  # counted like a turn, on the player's plan
    setup["player_id"] = conversation.player_id  # whose tokens the calls are
    if "story" in setup:
        return await story_auto_reply.suggest(setup, language, db)
    config: AgenticV2 = setup["config"]
    wait_s = (config.autoReplyWaitMs if wait_ms is None else wait_ms) / 1000
    deadline = time.monotonic() + wait_s
    while (guidance := await db(_guidance, conversation, message_id)) is None:
        if time.monotonic() >= deadline:
            raise SnapshotNotReady(
                message="the reply's turn-start state is not recorded yet; try again",
                details={"retryable": True},
            )
        await asyncio.sleep(min(POLL_S, max(deadline - time.monotonic(), 0)))
    character = setup["character"]
    system = role_system(
        setup["model_config"], "auto_reply", {"language": language, "characterName": character}
    )
    user = autoreply.material(
        setup["messages"],
        character=character,
        user=setup["user"],
        guidance=guidance,
        description=setup["description"],
    )
    request = ModelRequest(
        [{"role": "system", "content": system}, {"role": "user", "content": user}],
        temperature=autoreply.TEMPERATURE,
        timeout=config.modelCallTimeoutMs / 1000,
    )
    gateway = Gateway(
        setup["tenant"], setup["model_config"], "auto_reply", run_db=db,
        player_id=setup["player_id"],
    )  # fmt: skip
    options: list[str] = []
    usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    attempts, last_error = 0, None
    while attempts < autoreply.ATTEMPTS and len(options) < autoreply.OPTIONS:
        attempts += 1
        try:
            result = await gateway.complete(request)
        except ModelError as exc:
            last_error = exc.code
            if exc.code in autoreply.ENDS_ATTEMPTS:
                break
            continue
        for key in usage:  # the answer's usage keeps its three counts
            usage[key] += getattr(result.usage, key)
        seen = {o.casefold() for o in options}
        for option in autoreply.parse_options(result.content, language):
            if option.casefold() not in seen and len(options) < autoreply.OPTIONS:
                options.append(option)
                seen.add(option.casefold())
    if len(options) < autoreply.OPTIONS:
        raise AutoReplyFailed(
            message=f"{len(options)} valid options after {attempts} attempts",
            details={"attempts": attempts, **({"model_error": last_error} if last_error else {})},
        )
    return {"options": options, "usage": usage}
