"""The record of each declared workflow's run in a turn (``WorkflowRun``): which turn, how it
ended, every node's trace, the error that failed it and its timings. Registered with the
runtime's models (``roleplay.models`` imports it); written only by
``roleplay.workflows.services``."""

from __future__ import annotations

import uuid

from django.db import models

from console.scoping import TenantScopedModel


class WorkflowRun(TenantScopedModel):
    """One run of a scenario's ``workflow`` before a turn's Actor: ``status`` ``succeeded``
    or ``failed``, ``nodes`` the node traces (``{node_id, capability, status, started_ms,
    ended_ms, output_bytes, error}``, in plan order), ``error`` ``{code, message, node}``
    when it failed, ``duration_ms`` the whole run, ``placed`` where its two context blocks
    went."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    turn = models.ForeignKey(
        "roleplay.Turn", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    scenario_id = models.UUIDField(null=True, blank=True)
    status = models.CharField(max_length=16)
    nodes = models.JSONField(default=list)
    error = models.JSONField(null=True, blank=True)
    placed = models.JSONField(default=dict, blank=True)
    duration_ms = models.FloatField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["conversation", "-created_at"], name="workflow_run_conv"),
        ]
        ordering = ["-created_at"]
