"""Story's model side (``story.engine.tools.Models``) over a tenant's model configs: every
call goes to ``storyV1.modelConfigId`` (the initialiser to ``initializerModelConfigId`` when
set), through the gateway (a ``ModelCall`` row with purpose ``story_init``,
``story_action``, ``story_plan``, ``story_advance``, ``story_settle`` or
``story_rebranch``), each tool call (an answer and its repair) bounded by
``modelCallTimeoutMs``."""

from __future__ import annotations

from typing import Any

from console.db import run_db
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.llm.errors import (
    ModelAuthError,
    ModelBadRequest,
    ModelContextExceeded,
    ModelError,
)
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest
from roleplay.scenarios.config import StoryV1
from story.engine.tools import ModelUnavailable

# What waiting will not fix: refused credentials or permissions (401/403) and a request the
# server rejects as malformed (a program error). A prompt too long for the model, a
# content filter and every transient failure are recoverable: Story steps aside.
UNRECOVERABLE = (ModelAuthError, ModelBadRequest)


def recoverable(exc: ModelError) -> bool:
    return not isinstance(exc, UNRECOVERABLE) or isinstance(exc, ModelContextExceeded)


def refs(config: StoryV1) -> dict[str, str]:
    """The model config each purpose calls (by the scenario's id or name)."""
    return {
        "default": config.modelConfigId,
        "story_init": config.initializerModelConfigId or config.modelConfigId,
    }


def read_configs(tenant_id, config: StoryV1) -> dict:
    return model_configs_by_ref(tenant_id, refs(config).values())


class StoryModels:
    def __init__(
        self,
        tenant,
        config: StoryV1,
        *,
        turn_id=None,
        configs: dict | None = None,
    ) -> None:
        self.tenant, self.turn_id, self.config = tenant, turn_id, config
        self.refs = refs(config)
        self.timeout_s: float | None = config.modelCallTimeoutMs / 1000
        self._configs = configs  # read with the turn's other reads, else at the first call
        self.call_ids: list[str] = []

    async def complete(
        self, purpose: str, messages: list[dict[str, str]], response_format: dict[str, Any]
    ) -> tuple[str, dict[str, int]]:
        if self._configs is None:
            self._configs = await run_db(read_configs, self.tenant.pk, self.config)
        ref = self.refs.get(purpose) or self.refs["default"]
        model_config = self._configs.get(ref)
        if model_config is None:
            raise ModelUnavailable(
                "model_config_missing",
                f"no model config {ref!r} for {purpose}",
                recoverable=False,
            )
        gateway = Gateway(self.tenant, model_config, purpose, turn_id=self.turn_id, run_db=run_db)
        # The tool call (``story.engine.tools.call``) bounds the answer and its repair
        # together by ``timeout_s``; this is each request's own transport limit.
        request = ModelRequest(
            messages, response_format=response_format, temperature=0.2, timeout=self.timeout_s
        )
        try:
            result = await gateway.complete(request)
        except ModelError as exc:
            raise ModelUnavailable(exc.code, str(exc), recoverable=recoverable(exc)) from exc
        finally:
            self.call_ids.extend(gateway.call_ids)
        usage = result.usage
        return result.content, {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
        }
