"""Stored regex scripts: one row per script, owned by the tenant (``global``), a character or
a preset. ``script`` is the script in SillyTavern's own shape, normalised by the engine
(``engine.ScriptSpec.to_sillytavern``), so what a card or preset brought is what an export
gives back. Registered with the runtime's models (``roleplay.models`` imports them)."""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q

from console.scoping import TenantScopedModel


class ScriptScope(models.TextChoices):
    GLOBAL = "global", "every conversation of the tenant"
    CHARACTER = "character", "the character's conversations (once allowed)"
    PRESET = "preset", "conversations whose model config uses the preset"


class RegexScript(TenantScopedModel):
    """One script. Order within an owner is ``position`` (then creation); across owners the
    turn runs global, then preset, then character scripts (SillyTavern's order)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scope = models.CharField(max_length=16, choices=ScriptScope.choices)
    character = models.ForeignKey(
        "roleplay.Character", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    preset = models.ForeignKey(
        "roleplay.Preset", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    position = models.PositiveIntegerField(default=0)
    script = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                name="regex_script_owner",
                condition=(
                    Q(scope="global", character__isnull=True, preset__isnull=True)
                    | Q(scope="character", character__isnull=False, preset__isnull=True)
                    | Q(scope="preset", character__isnull=True, preset__isnull=False)
                ),
            ),
        ]
        indexes = [models.Index(fields=["tenant", "scope"], name="regex_script_scope")]

    @property
    def name(self) -> str:
        return str(self.script.get("scriptName", ""))

    def __str__(self) -> str:
        return self.name or str(self.id)
