"""The tables of plans and usage (imported by ``roleplay.models``).

A ``Plan`` is what a player may spend; a null limit is unlimited. A player's plan is their
``PlanAssignment``, else the ``PlanDefault`` of the route their account came by
(``operator``, ``invite``, ``open``), else the tenant's default for players without an
account (``none``); with none of these the player is unlimited. ``QuotaCounter`` rows count
messages and tokens per player per day and per month (UTC); the admission's conditional
upsert is the only writer of ``messages``.
"""

from __future__ import annotations

import uuid

from django.db import models

from console.scoping import TenantScopedModel

ROUTES = ("operator", "invite", "open", "none")
"""The routes a default plan is set for; ``none``: players without an account."""


class Plan(TenantScopedModel):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    messages_per_day = models.PositiveIntegerField(null=True, blank=True)
    tokens_per_day = models.PositiveBigIntegerField(null=True, blank=True)
    tokens_per_month = models.PositiveBigIntegerField(null=True, blank=True)
    max_reply_tokens = models.PositiveIntegerField(null=True, blank=True)
    max_context_tokens = models.PositiveIntegerField(null=True, blank=True)
    # The model configs a turn may use (empty: all).
    model_configs = models.ManyToManyField("roleplay.ModelConfig", blank=True, related_name="+")
    # What the plan allows beyond chat (``images``), a list of names.
    features = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="plan_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class PlanAssignment(TenantScopedModel):
    """The plan an operator gave one player."""

    player = models.OneToOneField(
        "console.Player", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="assignments")
    updated_at = models.DateTimeField(auto_now=True)


class PlanDefault(TenantScopedModel):
    """The plan of players who came by ``route`` and were given none."""

    route = models.CharField(max_length=10)
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="defaults")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "route"], name="plan_default_route"),
        ]


class QuotaCounter(TenantScopedModel):
    """A player's messages and tokens in one period (``day`` or ``month``) from ``starts_on``."""

    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    period = models.CharField(max_length=5)
    starts_on = models.DateField()
    messages = models.PositiveIntegerField(default=0)
    tokens = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["player", "period", "starts_on"], name="quota_counter_period"
            ),
        ]
