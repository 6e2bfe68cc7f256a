"""Reads of workflow runs: a conversation's, newest first (tenant-scoped)."""

from __future__ import annotations

from console.scoping import scoped
from roleplay.workflows.models import WorkflowRun


def runs_of(tenant, conversation):
    """The runs of ``conversation`` (one of ``tenant``'s), newest first."""
    return scoped(WorkflowRun, tenant).filter(conversation=conversation).order_by("-created_at")
