"""A model config's text-completion settings as the provider takes them, and the rule that
resolves the template a config names (a built-in key, else one of the tenant's imported
templates, copied onto the config so that a turn renders without another read)."""

from __future__ import annotations

from typing import Any

from .engine import BUILTIN_TEMPLATES
from .engine.samplers import SAMPLER_NAMES

# The model config's text-completion fields that REST and the console write.
TEXT_COMPLETION_FIELDS = ("wire", "instruct_template", *SAMPLER_NAMES)
# ``instruct_template`` naming the model's own Jinja chat template, read from the bundled
# model's GGUF file when the config is saved.
OWN_TEMPLATE = "gguf"
# Names an imported template cannot take: the built-ins' keys and the model's own.
RESERVED_NAMES = (*BUILTIN_TEMPLATES, OWN_TEMPLATE)


def text_completion_settings(config: Any) -> dict[str, Any]:
    """``ProviderConfig``'s ``wire``, ``template`` and ``samplers`` of a ``ModelConfig``
    (empty for any other provider)."""
    if config.provider != "text_completion":
        return {}
    samplers = {name: getattr(config, name) for name in SAMPLER_NAMES}
    return {
        "wire": config.wire,
        "template": template_body(config.instruct_template, config.template_body),
        "samplers": {k: v for k, v in samplers.items() if v is not None},
    }


def template_body(name: str, stored: dict[str, Any] | None) -> dict[str, Any]:
    """The template to render with: a built-in's by its key (empty name: ChatML), else the
    copy kept on the config (an imported template's, or the model's own ``{"jinja": ...}``)."""
    builtin = BUILTIN_TEMPLATES.get(name or "chatml")
    if builtin is not None:
        return {"instruct": builtin.to_dict(), "context": None}
    return dict(stored or {})
