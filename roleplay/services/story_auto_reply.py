"""Auto-reply suggestions for a Story conversation (seed 002, lines 1543–1556): the same
endpoint as Agent V2's, routed by the scenario. The target must be exactly one assistant
message of the conversation with a user message before it; the model reads the stored reply
and at most 6 earlier non-empty messages, never the story's state; up to three attempts,
each told why the previous answer was refused; 180 s per call; writes nothing. Failure is
502 ``auto_reply_generation_failed``."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from console import failures
from roleplay.agentic.autoreply import script_ok
from roleplay.errors import NotFound, RoleplayError
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest
from roleplay.selectors import model_configs_by_ref, persona_for
from story.engine import autoreply


class AnchorInvalid(RoleplayError, failures.Invalid):
    default_code = "auto_reply_anchor_invalid"


class GenerationFailed(RoleplayError, failures.BadGateway):
    default_code = "auto_reply_generation_failed"


def setup(conversation, config, message_id: str, lines) -> dict:
    """What the call needs, read once: ``lines`` are the history rows (id, ts, role, text)."""
    ref = config.modelConfigId
    model_config = model_configs_by_ref(conversation.tenant_id, [ref]).get(ref)
    if model_config is None:
        raise GenerationFailed(message=f"no model config {ref!r} for Story")
    matches = [
        i for i, row in enumerate(lines) if str(row[0]) == message_id and row[2] == "assistant"
    ]
    if len(matches) != 1:
        raise NotFound(message="no such assistant message in this conversation")
    index = matches[0]
    before = [(row[2], row[3]) for row in lines[:index] if row[2] in ("user", "assistant")]
    if not any(role == "user" for role, _ in before):
        raise AnchorInvalid(message="the reply has no user message before it")
    reply = lines[index][3]
    if not reply.strip():
        raise AnchorInvalid(message="the stored reply is empty")
    return {
        "story": config,
        "model_config": model_config,
        "earlier": [(r, t) for r, t in before if t.strip()][-autoreply.CONTEXT_MESSAGES :],
        "reply": reply,
        "user": persona_for(conversation).name,
        "character": conversation.character.name,
        "tenant": conversation.tenant,
    }


async def suggest(setup: dict, language: str, db) -> dict[str, Any]:
    character = setup["character"]
    messages = [
        {"role": "system", "content": autoreply.system(character, language)},
        {
            "role": "user",
            "content": autoreply.material(
                setup["earlier"], setup["reply"], character=character, user=setup["user"]
            ),
        },
    ]
    gateway = Gateway(setup["tenant"], setup["model_config"], "auto_reply", run_db=db)
    usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    problems: list[str] = []
    for _ in range(autoreply.ATTEMPTS):
        request = ModelRequest(
            messages,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "story_auto_reply", "schema": autoreply.SCHEMA},
            },
            temperature=autoreply.TEMPERATURE,
            timeout=autoreply.CALL_TIMEOUT_MS / 1000,
        )
        try:
            result = await gateway.complete(request)
        except ModelError as exc:
            problems.append(exc.code)
            continue
        for key, value in asdict(result.usage).items():
            usage[key] += value
        try:
            return {"options": autoreply.parse(result.content, language, script_ok), "usage": usage}
        except autoreply.OptionsInvalid as exc:
            problems.append(str(exc))
            messages = messages + [
                {"role": "assistant", "content": result.content[:4000]},
                {"role": "user", "content": f"That answer was refused: {exc}. Answer again."},
            ]
    raise GenerationFailed(
        message=f"no valid options after {autoreply.ATTEMPTS} attempts",
        details={"attempts": autoreply.ATTEMPTS, "problems": problems},
    )
