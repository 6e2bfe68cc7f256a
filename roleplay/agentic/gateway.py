"""Agent V2's model side (``runner.Models``) over a tenant's model configs.

Each role calls the model config the scenario names for it (by id or by name), with the
system prompt its preset's role template gives (``orchestrator``, ``specialist_<tool>``,
``director``, ``auto_reply``), macros expanded with the variables the capability supplies.
The escalation model uses its own ``orchestrator`` template when its preset has one, else
the orchestrator's. Every call goes through the gateway (original plus two retries on
transient errors) and is a ``ModelCall`` row with purpose ``orchestrator``,
``specialist:<tool>``, ``director`` or ``auto_reply``; a call that still fails transiently
is tried once more on ``recovery.transientRetryModelConfigId`` when one is set.

With ``contextGovernance`` on, every call's prompt (messages and tool definitions, in
cl100k tokens) is counted against its config's window less its output and
``safetyMarginTokens`` (seed 002 line 143), and recorded in :attr:`TenantModels.budgets`
(the run keeps them): ``enforce`` refuses a call over that budget before sending it
(``context_overflow``, not retried), ``shadow`` only records it.
"""

from __future__ import annotations

import json

from console.db import run_db
from console.tokens import count_messages, count_tokens
from roleplay.compact.engine.budget import budget as window_budget
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway, provider_config
from roleplay.llm.types import CompletionResult, ModelRequest
from roleplay.models import ModelConfig
from roleplay.presets.roles import RoleUnavailable, role_system
from roleplay.scenarios.config import AgenticV2


class OverBudget(ModelError):
    """Under ``enforce`` governance, a call's prompt does not fit its model's window less
    the output and the safety margin: refused before it is sent."""

    def __init__(self, message: str) -> None:
        super().__init__("context_overflow", message, retryable=False)


class TenantModels:
    """``runner.Models`` for one run: the configs resolved once, the call ids collected."""

    def __init__(self, tenant, config: AgenticV2, *, turn_id=None) -> None:
        self.tenant, self.turn_id = tenant, turn_id
        self.governance = config.contextGovernance
        # With governance: each call's {purpose, mode, tokens, budget, over}, in call order.
        self.budgets: list[dict] = []
        refs = config.modelConfigs
        self.refs: dict[str, str | None] = {
            "orchestrator": refs.orchestrator,
            "escalation": config.escalationModelConfigId,
            "director": refs.director,
            "auto_reply": refs.autoReply,
            "recovery": config.recovery.transientRetryModelConfigId,
        }
        for tool, ref in refs.specialists.model_dump().items():
            self.refs[f"specialist:{tool}"] = ref
        self._configs = model_configs_by_ref(tenant.pk, self.refs.values())  # read before the run
        self.call_ids: list[str] = []

    def config(self, role: str) -> ModelConfig:
        ref = self.refs.get(role)
        found = self._configs.get(ref) if ref else None
        if found is None:
            raise RoleUnavailable(f"no model config {ref!r} for {role}")
        return found

    def system(self, role: str, variables: dict[str, str]) -> str:
        if role.startswith("specialist_"):
            return role_system(self.config(role.replace("_", ":", 1)), role, variables)
        if role == "escalation":
            try:
                return role_system(self.config("escalation"), "orchestrator", variables)
            except RoleUnavailable:
                return role_system(self.config("orchestrator"), "orchestrator", variables)
        return role_system(self.config(role), role, variables)

    async def complete(self, role: str, request: ModelRequest) -> CompletionResult:
        purpose = "orchestrator" if role == "escalation" else role
        try:
            return await self._call(self.config(role), purpose, request)
        except ModelError as exc:
            if not exc.retryable or not self.refs.get("recovery"):
                raise
            return await self._call(self.config("recovery"), purpose, request)

    def _govern(self, config: ModelConfig, purpose: str, request: ModelRequest) -> None:
        governance = self.governance
        if governance is None:
            return
        window = provider_config(config)
        tokens = count_messages(request.messages)
        if request.tools:
            tokens += count_tokens(json.dumps(request.tools, ensure_ascii=False))
        room = window_budget(
            window.context_limit,
            request.max_tokens or window.max_output_tokens,
            governance.safetyMarginTokens,
        )
        over = tokens > room
        self.budgets.append(
            {"purpose": purpose, "mode": governance.mode, "tokens": tokens, "budget": room,
             "over": over}
        )  # fmt: skip
        if over and governance.mode == "enforce":
            raise OverBudget(
                f"{purpose}: {tokens} prompt tokens, over the budget of {room} (the window "
                f"less the output and safetyMarginTokens {governance.safetyMarginTokens})"
            )

    async def _call(self, config: ModelConfig, purpose: str, request: ModelRequest):
        self._govern(config, purpose, request)
        gateway = Gateway(self.tenant, config, purpose, turn_id=self.turn_id, run_db=run_db)
        try:
            return await gateway.complete(request)
        finally:
            self.call_ids.extend(gateway.call_ids)
