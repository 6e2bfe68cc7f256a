"""Agent V2's model side (``runner.Models``) over a tenant's model configs.

Each role calls the model config the scenario names for it (by id or by name), with the
system prompt its preset's role template gives (``orchestrator``, ``specialist_<tool>``,
``director``, ``auto_reply``), macros expanded with the variables the capability supplies.
The escalation model uses its own ``orchestrator`` template when its preset has one, else
the orchestrator's. Every call goes through the gateway (original plus two retries on
transient errors) and is a ``ModelCall`` row with purpose ``orchestrator``,
``specialist:<tool>``, ``director`` or ``auto_reply``; a call that still fails transiently
is tried once more on ``recovery.transientRetryModelConfigId`` when one is set.
"""

from __future__ import annotations

from console.db import run_db
from roleplay.agentic.config import AgenticV2
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import CompletionResult, ModelRequest
from roleplay.models import ModelConfig
from roleplay.preset_selectors import effective_preset
from roleplay.prompting.macros import MacroContext, expand_macros
from roleplay.prompting.presets import NamedPromptMissing
from roleplay.selectors import model_configs_by_ref


class RoleUnavailable(ModelError):
    """A model config the scenario names, or its role prompt, is gone (changed after the
    scenario was saved): the run fails with ``model_config_missing``."""

    def __init__(self, message: str) -> None:
        super().__init__("model_config_missing", message, retryable=False)


def role_system(config: ModelConfig | None, template: str, variables: dict[str, str]) -> str:
    """The role template ``template`` of ``config``'s preset, its macros expanded."""
    try:
        text = effective_preset(config).named(template).content
    except NamedPromptMissing as exc:
        raise RoleUnavailable(exc.message) from None
    return expand_macros(text, MacroContext(variables=variables)).text


class TenantModels:
    """``runner.Models`` for one run: the configs resolved once, the call ids collected."""

    def __init__(self, tenant, config: AgenticV2, *, turn_id=None) -> None:
        self.tenant, self.turn_id = tenant, turn_id
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

    async def _call(self, config: ModelConfig, purpose: str, request: ModelRequest):
        gateway = Gateway(self.tenant, config, purpose, turn_id=self.turn_id, run_db=run_db)
        try:
            return await gateway.complete(request)
        finally:
            self.call_ids.extend(gateway.call_ids)
