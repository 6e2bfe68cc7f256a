"""A role prompt of a model config's preset (``orchestrator``, ``compactor``,
``front_controller``, …), its macros expanded with the variables the capability supplies:
the system prompt of every role model (Agent V2, Compact, auto-reply, the front loop).
A preset that lost the role prompt after the scenario was saved is a
:class:`RoleUnavailable` (``model_config_missing``)."""

from __future__ import annotations

from roleplay.llm.errors import ModelError
from roleplay.models import ModelConfig
from roleplay.presets.selectors import effective_preset
from roleplay.prompting.macros import MacroContext, expand_macros
from roleplay.prompting.presets import NamedPromptMissing


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
