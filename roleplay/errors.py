"""What the runtime's services raise: characters, players, conversations, model configs.

Each class is a :class:`RoleplayError` of one kind from ``console.failures``; the kind alone
decides the HTTP status (in ``console.errors.exception_handler``), and the console pages turn
the same errors into messages next to the form fields. So a rule the services enforce answers
the same way through every door: REST view, console form, management command or seed data.
"""

from __future__ import annotations

from console import failures


class RoleplayError(failures.DomainError):
    """Base of every runtime failure; a subclass fixes the kind (and maybe the code)."""


class FieldErrors(RoleplayError, failures.FieldErrors):
    """Values of the body break field rules (400 ``validation_error``), raised by the
    runtime's services (``console.failures.FieldErrors`` has the shape)."""


class NotFound(RoleplayError, failures.NotFound):
    """The row is gone (deleted by another request meanwhile), or is another tenant's (404)."""


class Duplicate(RoleplayError, failures.Conflict):
    """Another row of the tenant already holds this unique value (409 ``duplicate``);
    ``details.field`` names the field."""

    default_code = "duplicate"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message=message, details={"field": field})


class TurnInProgress(RoleplayError, failures.Conflict):
    """A reply is being generated in the conversation (409 ``turn_in_progress``): deleting it
    now would let the turn store its reply into a conversation that no longer exists."""

    default_code = "turn_in_progress"


class NothingToRewrite(RoleplayError, failures.Conflict):
    """A regenerate or continue asked of a conversation whose last message is not a reply
    (409 ``nothing_to_rewrite``)."""

    default_code = "nothing_to_rewrite"


class HasBranches(RoleplayError, failures.Conflict):
    """The conversation has branches that share its history (409 ``has_branches``): delete
    them first (``docs/branches.md``)."""

    default_code = "has_branches"


class BadBookmarkName(RoleplayError, failures.Invalid):
    """A bookmark's name is blank or longer than its limit (422 ``invalid_bookmark_name``)."""

    default_code = "invalid_bookmark_name"


class TokenizerUnavailable(RoleplayError, failures.Invalid):
    """A model config's tokenizer does not load (422): ``tokenizer_json_invalid`` for a
    ``tokenizer.json`` that is not one, ``tokenizer_unavailable`` for a choice whose file
    is not there (a ``gguf`` config without a readable GGUF, an ``hf`` one without a
    ``tokenizer.json``, ``o200k`` without its ranks installed)."""

    default_code = "tokenizer_unavailable"
