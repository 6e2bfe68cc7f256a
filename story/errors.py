"""What Story's services and coordinator raise: each a ``console.failures`` kind with the
seed's stable code, so the API maps it to its status and the turn reads its ``code``."""

from __future__ import annotations

from console import failures


class StoryError(failures.DomainError):
    """Base of every Story failure."""


class StaleWrite(StoryError, failures.Conflict):
    """The story moved on since this request read it: nothing is written (409)."""

    default_code = "stale_write_rejected"


class SettlementPending(StoryError, failures.Conflict):
    """The previous reply's world settlement is invalid: the old prepared turn is kept and
    this request fails (409 ``story_settlement_pending``)."""

    default_code = "story_settlement_pending"


class TooLarge(StoryError, failures.TooLarge):
    default_code = "story_state_too_large"


class NotFound(StoryError, failures.NotFound):
    default_code = "not_found"


class Invalid(StoryError, failures.Invalid):
    default_code = "validation_error"


class Refused(StoryError, failures.Conflict):
    default_code = "story_state_other_character"


class ModelRefused(StoryError, failures.BadGateway):
    """A Story model failed in a way waiting will not fix (refused credentials or
    permissions, a malformed request): the request fails with the model's own code."""

    default_code = "story_model_refused"
