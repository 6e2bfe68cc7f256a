"""Coded errors of moderation."""

from __future__ import annotations

from console.failures import BadRequest, Invalid, Locked, NotFound


class InputBlocked(Invalid):
    """The player's message was refused by the tenant's policy; nothing of it is stored
    but a redacted record for review."""

    default_code = "input_blocked"


class PlayerSuspended(Locked):
    default_code = "player_suspended"


class ReportInvalid(BadRequest):
    default_code = "report_invalid"


class ActionInvalid(Invalid):
    """An action the case cannot take (no message to hide, no player to suspend)."""

    default_code = "moderation_action_invalid"


class CaseNotFound(NotFound):
    default_code = "not_found"
