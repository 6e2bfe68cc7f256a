"""An Agent V2 world on the scripted model server: one model config per role, each with a
model name of its own, and a router that answers each role as the test scripts it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async

from roleplay.llm.scripted_server import Reply
from roleplay.models import Conversation, ModelConfig
from roleplay.prompting.director_state import DIRECTOR_STATE_HEADER, DIRECTOR_STATE_SECTIONS
from roleplay.scenarios.config import SPECIALISTS
from roleplay.scenarios.services import create_scenario

ROLES = ("actor", "orchestrator", "specialist", "director", "autoreply", "escalation")


def state_text(tag: str = "one", length: int = 900) -> str:
    """A valid Director state of about ``length`` characters, marked with ``tag``."""
    body = "\n".join(f"{section}: {tag} notes." for section in DIRECTOR_STATE_SECTIONS)
    text = f"{DIRECTOR_STATE_HEADER}\n{body}"
    return text + "\n" + ("Facts kept. " * ((length - len(text)) // 12 + 1))[: length - len(text)]


def tool_call(name: str, reason: str = "something changed", **extra: Any) -> dict[str, Any]:
    return {"name": name, "arguments": {"reason": reason, **extra}}


@dataclass
class Router:
    """Answers by role (the request's model name); each role's answer is a function of the
    request, or a fixed ``Reply``. ``seen[role]`` keeps every request a role got."""

    answers: dict[str, Callable[[dict], Reply] | Reply] = field(default_factory=dict)
    seen: dict[str, list[dict]] = field(default_factory=dict)

    def __call__(self, request: dict) -> Reply:
        role = request["model"].removesuffix("-model")
        self.seen.setdefault(role, []).append(request)
        answer = self.answers.get(role, Reply(content="OK"))
        return answer(request) if callable(answer) else answer


def phase(request: dict) -> int:
    """1 for the orchestrator's selection, 2 when it already has the specialists' results."""
    return 2 if any(m.get("role") == "tool" for m in request["messages"]) else 1


def happy_router() -> Router:
    """manage_callbacks in phase 1, the Director in phase 2, a valid state."""
    router = Router()
    router.answers = {
        "actor": Reply(content="The keeper nods and takes the lamp.", chunks=3),
        "orchestrator": lambda r: Reply(
            tool_calls=[tool_call("manage_callbacks", "a promise was made")]
            if phase(r) == 1
            else [tool_call("update_director_state", "keep the promise")],
            finish_reason="tool_calls",
        ),
        "specialist": Reply(content="Open: the user promised to return the key by dawn."),
        "director": Reply(content=state_text("one")),
        "autoreply": Reply(content='{"options": ["Go on.", "How do you feel?", "Look around."]}'),
    }
    return router


def make_world(tenant, player, character, llm, *, agentic: dict[str, Any] | None = None):
    """Model configs per role, a scenario with Agent V2 on (the character's default) and a
    conversation on the actor's config; (scenario, configs by role, conversation)."""
    configs = {
        role: ModelConfig.objects.create(
            tenant=tenant,
            name=role,
            provider="openai_compatible",
            model=f"{role}-model",
            base_url=llm.base_url,
            context_limit=8192,
            max_output_tokens=512,
            timeout_ms=20000,
        )
        for role in ROLES
    }
    v2 = {
        "modelConfigs": {
            "actor": "actor",
            "orchestrator": "orchestrator",
            "specialists": {tool: "specialist" for tool in SPECIALISTS},
            "director": "director",
            "autoReply": "autoreply",
        },
        "modelCallTimeoutMs": 10000,
        **(agentic or {}),
    }
    scenario = create_scenario(
        tenant, name="Continuity", model_config=configs["actor"], agenticV2=v2
    )
    character.default_scenario = scenario
    character.save(update_fields=["default_scenario"])
    conversation = Conversation.objects.create(
        tenant=tenant, player=player, character=character, model_config=configs["actor"]
    )
    return scenario, configs, conversation


async def scripted_world(tenant, player, character, llm, router=None, **agentic):
    """:func:`make_world` from async code, the scripted server answering by ``router``
    (the happy path by default); (scenario, conversation, router)."""
    scenario, _configs, conversation = await sync_to_async(make_world)(
        tenant, player, character, llm, agentic=agentic or None
    )
    router = router or happy_router()
    llm.default = Reply.from_callable(router)
    return scenario, conversation, router
