"""Auto-reply suggestions for a Story conversation (seed 002, lines 1543–1556, 1570–1611):
the same endpoint as Agent V2's, routed by the scenario, and the same
``agenticV2.modelConfigs.autoReply`` model config, whose preset's ``auto_reply`` prompt is
the system prompt (without that config the request is refused, 422
``auto_reply_not_configured``). The target must be exactly one assistant message of the
conversation with a user message before it; the model reads the character's name and
description, the stored reply and at most 6 earlier non-empty messages, never the story's
state; the temperature is the model config's; up to three attempts, each told why the
previous answer was refused, and a content-filtered answer ends them at once; 180 s per
call; writes nothing. Failure is 502 ``auto_reply_generation_failed``."""

from __future__ import annotations

from typing import Any

from console import failures
from roleplay.agentic.engine.autoreply import ENDS_ATTEMPTS, character_part, script_ok
from roleplay.errors import NotFound, RoleplayError
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest
from roleplay.players.selectors import persona_for
from roleplay.presets.roles import role_system
from roleplay.prompting.presets import AUTO_REPLY
from story.engine import autoreply


class AnchorInvalid(RoleplayError, failures.Invalid):
    default_code = "auto_reply_anchor_invalid"


class GenerationFailed(RoleplayError, failures.BadGateway):
    default_code = "auto_reply_generation_failed"


def setup(conversation, model_config, message_id: str, lines) -> dict:
    """What the call needs, read once: ``model_config`` the ``autoReply`` one, ``lines`` the
    history rows (id, ts, role, text)."""
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
        "story": True,
        "model_config": model_config,
        "earlier": [(r, t) for r, t in before if t.strip()][-autoreply.CONTEXT_MESSAGES :],
        "reply": reply,
        "user": persona_for(conversation).name,
        "character": conversation.character.name,
        "description": conversation.character.description,
        "tenant": conversation.tenant,
    }


async def suggest(setup: dict, language: str, db) -> dict[str, Any]:
    character = setup["character"]
    system = role_system(
        setup["model_config"], AUTO_REPLY, {"language": language, "characterName": character}
    )
    material = autoreply.material(
        setup["earlier"],
        setup["reply"],
        character=character,
        user=setup["user"],
        about=character_part(character, setup["description"]),
    )
    messages = [{"role": "system", "content": system}, {"role": "user", "content": material}]
    gateway = Gateway(
        setup["tenant"], setup["model_config"], "auto_reply", run_db=db,
        player_id=setup.get("player_id"),
    )  # fmt: skip
    usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    problems: list[str] = []
    for _ in range(autoreply.ATTEMPTS):
        request = ModelRequest(
            messages,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "story_auto_reply", "schema": autoreply.SCHEMA},
            },
            timeout=autoreply.CALL_TIMEOUT_MS / 1000,
        )
        try:
            result = await gateway.complete(request)
        except ModelError as exc:
            problems.append(exc.code)
            if exc.code in ENDS_ATTEMPTS:
                break
            continue
        for key in usage:  # the answer's usage keeps its three counts
            usage[key] += getattr(result.usage, key)
        try:
            return {"options": autoreply.parse(result.content, language, script_ok), "usage": usage}
        except autoreply.OptionsInvalid as exc:
            problems.append(str(exc))
            messages = messages + [
                {"role": "assistant", "content": result.content[:4000]},
                {"role": "user", "content": f"That answer was refused: {exc}. Answer again."},
            ]
    raise GenerationFailed(
        message=f"no valid options after {len(problems)} attempts",
        details={"attempts": len(problems), "problems": problems},
    )
