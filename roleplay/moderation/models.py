"""The tables of moderation (imported by ``roleplay.models``): a tenant's policy, the
queue's cases (reports and automatic flags) and the sanctions on players."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from console.scoping import TenantScopedModel


class ModerationPolicy(models.Model):
    """A tenant's moderation of turns; off until an admin turns it on."""

    tenant = models.OneToOneField("console.Tenant", on_delete=models.CASCADE, primary_key=True)
    enabled = models.BooleanField(default=False)
    check_input = models.BooleanField(default=True)
    check_reply = models.BooleanField(default=False)
    # An OpenAI-compatible ``/moderations`` endpoint (its base URL, model and key); None:
    # the operator's keyword and regex lists alone.
    model_config = models.ForeignKey(
        "roleplay.ModelConfig", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # ``engine.rules.Rules``: categories (action, keywords, patterns) and endpoint_action.
    rules = models.JSONField(default=dict, blank=True)
    # Listed ``nsfw`` characters are shown to players who confirmed their age (off: to no one).
    show_nsfw = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)


class CaseSource(models.TextChoices):
    REPORT = "report", "a player's report"
    INPUT = "input", "a player's input, flagged"
    REPLY = "reply", "a reply, flagged"


class CaseStatus(models.TextChoices):
    OPEN = "open", "open"
    DISMISSED = "dismissed", "dismissed"
    ACTIONED = "actioned", "actioned"


class Case(TenantScopedModel):
    """One item of the moderation queue: a report or an automatic flag.

    A flag of a blocked input keeps no text of it: its category, hash and a redacted
    excerpt (``engine.rules.redacted``). ``player`` is whom the case is about (the
    conversation's player), ``reporter`` who reported it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    source = models.CharField(max_length=8, choices=CaseSource.choices)
    status = models.CharField(max_length=10, choices=CaseStatus.choices, default=CaseStatus.OPEN)
    category = models.CharField(max_length=100, blank=True, default="")
    categories = models.JSONField(default=list, blank=True)
    action = models.CharField(max_length=12, blank=True, default="")
    reason = models.CharField(max_length=1000, blank=True, default="")
    excerpt = models.CharField(max_length=200, blank=True, default="")
    content_hash = models.CharField(max_length=64, blank=True, default="")
    player = models.ForeignKey(
        "console.Player", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    reporter = models.ForeignKey(
        "console.Player", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    conversation = models.ForeignKey(
        "roleplay.Conversation", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    message_id = models.UUIDField(null=True, blank=True)
    character = models.ForeignKey(
        "roleplay.Character", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    resolution = models.CharField(max_length=20, blank=True, default="")
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "status", "-created_at"], name="case_queue")]


class SanctionKind(models.TextChoices):
    SUSPEND = "suspend", "suspended"
    BAN = "ban", "banned"


class Sanction(TenantScopedModel):
    """A player suspended until ``until`` or banned (no end), until lifted."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8, choices=SanctionKind.choices)
    reason = models.CharField(max_length=1000)
    until = models.DateTimeField(null=True, blank=True)
    case = models.ForeignKey(
        Case, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    lifted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "player", "lifted_at"], name="sanction_player")]
