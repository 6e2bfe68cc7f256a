"""The declared workflows' coded errors (``code``, ``message``, ``details``), mapped to HTTP
once by the project's handler.

- :class:`WorkflowInvalid` (422): a scenario's ``workflow`` breaks a field rule or the static
  planner refuses it; ``details`` carry ``field`` (dotted path), ``reason`` (the planner's
  or the parser's code: ``cycle``, ``duplicate_node``, ``missing_dependency``,
  ``invisible_capability``, ``unregistered_capability``…) and ``node`` when one is to blame.
- :class:`WorkflowFailed` (``workflow_failed``): a run's required node failed (or the
  workflow no longer plans): the turn fails, naming the node.
"""

from __future__ import annotations

from console import failures
from roleplay.errors import RoleplayError

WORKFLOW_FAILED = "workflow_failed"


class WorkflowInvalid(RoleplayError, failures.Invalid):
    default_code = "validation_error"

    def __init__(
        self,
        field: str,
        message: str,
        *,
        reason: str,
        node: str | None = None,
        errors: list[dict] | None = None,
    ):
        details: dict = {"field": field, "reason": reason}
        if node is not None:
            details["node"] = node
        if errors:
            details["errors"] = errors
        super().__init__(message=f"{field}: {message}", details=details)
        self.field = field
        self.reason = reason
        self.node = node
        self.text = message


class WorkflowFailed(RoleplayError, failures.Unavailable):
    """The turn fails: ``details.node`` names the node, ``details.reason`` its error code."""

    default_code = WORKFLOW_FAILED

    def __init__(self, message: str, *, node: str | None, reason: str) -> None:
        super().__init__(message=message, details={"node": node, "reason": reason})
