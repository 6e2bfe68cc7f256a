"""The coded errors of plans, quotas and rate limits."""

from __future__ import annotations

from console.failures import Conflict, Invalid, TooMany


class QuotaExceeded(TooMany):
    """A turn refused at its start: the player is at a limit of their plan (429
    ``quota_exceeded`` with ``quota``, ``limit``, ``used``, ``retry_at``, ``retry_after``)."""

    default_code = "quota_exceeded"


class ModelConfigNotAllowed(Invalid):
    """The turn's model config is not among the plan's (422 ``model_config_not_allowed``)."""

    default_code = "model_config_not_allowed"


class FeatureNotAllowed(Invalid):
    """The plan does not allow this feature (422 ``feature_not_allowed``)."""

    default_code = "feature_not_allowed"


class PlanInUse(Conflict):
    """A plan players or defaults still use cannot go without ``reassign`` (409)."""

    default_code = "plan_in_use"
