"""The model config's text-completion fields (a mixin of ``roleplay.models.ModelConfig``) and
the tenant's imported SillyTavern templates. The samplers' ranges come from the engine's one
table (``engine.samplers.SAMPLERS``), so the database, REST and the console check the same."""

from __future__ import annotations

import uuid

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from console.scoping import TenantScopedModel

from .engine.samplers import SAMPLERS

_BY_NAME = {s.name: s for s in SAMPLERS}


class Wire(models.TextChoices):
    """The shape of a text-completion server's API."""

    KOBOLDCPP = "koboldcpp", "KoboldCpp (/api/v1/generate, /api/extra/generate/stream)"
    LLAMACPP = "llamacpp", "llama.cpp server (/completion)"
    OPENAI_COMPLETIONS = "openai_completions", "OpenAI completions (/v1/completions)"


def _sampler(name: str) -> models.Field:
    s = _BY_NAME[name]
    kind = models.IntegerField if s.kind is int else models.FloatField
    bounds = [MinValueValidator(s.low), MaxValueValidator(s.high)]
    return kind(null=True, blank=True, default=None, validators=bounds, help_text=s.help)


class TextCompletionFields(models.Model):
    """How a ``text_completion`` config reaches its server and renders and samples."""

    wire = models.CharField(max_length=24, choices=Wire.choices, blank=True, default="")
    # A built-in template's key (``chatml``...) or the name of one of the tenant's imported
    # ones; empty: ChatML.
    instruct_template = models.CharField(max_length=100, blank=True, default="")
    # The imported template as it was when the config was saved (or the template last
    # changed): a turn renders without reading it again. Empty for a built-in.
    template_body = models.JSONField(default=dict, blank=True)
    top_k = _sampler("top_k")
    min_p = _sampler("min_p")
    typical_p = _sampler("typical_p")
    repetition_penalty = _sampler("repetition_penalty")
    repetition_penalty_range = _sampler("repetition_penalty_range")
    dry_multiplier = _sampler("dry_multiplier")
    dry_base = _sampler("dry_base")
    dry_allowed_length = _sampler("dry_allowed_length")
    xtc_threshold = _sampler("xtc_threshold")
    xtc_probability = _sampler("xtc_probability")
    mirostat_mode = _sampler("mirostat_mode")
    mirostat_tau = _sampler("mirostat_tau")
    mirostat_eta = _sampler("mirostat_eta")

    class Meta:
        abstract = True


class TemplateKind(models.TextChoices):
    SILLYTAVERN = "sillytavern", "SillyTavern instruct/context template"
    JINJA = "jinja", "The model's own Jinja chat template"


class InstructTemplate(TenantScopedModel):
    """A template the tenant imported, in the engine's checked shape: a SillyTavern instruct
    and/or context template (``engine.InstructTemplate.to_dict()``), or a model's own Jinja
    chat template from a ``tokenizer_config.json`` (``engine.JinjaTemplate.to_dict()``, kind
    ``jinja``); a config names it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    kind = models.CharField(
        max_length=16, choices=TemplateKind.choices, default=TemplateKind.SILLYTAVERN
    )
    instruct = models.JSONField(null=True, blank=True)
    context = models.JSONField(null=True, blank=True)
    jinja = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="instructtemplate_unique_name")
        ]

    def __str__(self) -> str:
        return self.name
