"""The gateway's error vocabulary: stable codes, and whether a retry may help.

Providers translate their transport's exceptions into these, so the retry policy in
``provider.ModelClient`` and the codes stored on ``ModelCall`` rows never depend on which
SDK raised what.
"""

from __future__ import annotations

from typing import ClassVar

from console.failures import DomainError, Kind


class ModelError(DomainError):
    """Base of every gateway failure: ``ModelError(code, message, retryable)``.

    ``retryable`` says whether the same request may succeed if sent again; ``retry_after``
    is the server's hint in seconds (``Retry-After``), when it gave one; ``status`` is the
    HTTP status, when there was one. Subclasses fix the code and the default retryability,
    so they are raised as ``ModelTimeout("message")``. A :class:`DomainError` like every
    coded failure, so the one HTTP mapping serves it: a transient one (timeout, rate limit,
    server or connection error, model gone) is ``unavailable``, any other ``bad_gateway``.
    """

    kind: ClassVar[Kind] = "bad_gateway"
    default_code = "model_error"
    code: str = "model_error"

    def __init__(
        self,
        code: str,
        message: str = "",
        retryable: bool = False,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(code, message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        # the reasoning a stream had given before it failed (kept beside the partial reply)
        self.partial_reasoning = ""

    def with_reasoning(self, reasoning: str) -> ModelError:
        """This error, carrying the reasoning its stream gave before it failed."""
        self.partial_reasoning = reasoning
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class _CodedError(ModelError):
    """A ModelError whose class fixes its code and default retryability."""

    default_retryable: bool = False

    def __init__(
        self,
        message: str = "",
        *,
        retryable: bool | None = None,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(
            type(self).code,
            message,
            self.default_retryable if retryable is None else retryable,
            status=status,
            retry_after=retry_after,
        )


class ModelTimeout(_CodedError):
    kind = "unavailable"
    code = "model_timeout"
    default_retryable = True


class ModelRateLimited(_CodedError):
    kind = "unavailable"
    code = "model_rate_limited"
    default_retryable = True


class ModelServerError(_CodedError):
    kind = "unavailable"
    code = "model_server_error"
    default_retryable = True


class ModelConnectionError(_CodedError):
    kind = "unavailable"
    code = "model_connection_error"
    default_retryable = True


class ModelUnavailable(_CodedError):
    """The model cannot serve now: the local model process is gone or restarting."""

    kind = "unavailable"
    code = "model_unavailable"
    default_retryable = True


class ModelBadRequest(_CodedError):
    code = "model_bad_request"


class ModelContextExceeded(ModelBadRequest):
    """The server says the prompt and the reply do not fit its context window: the
    config's ``context_limit`` is larger than the model the server runs."""

    code = "model_context_exceeded"


class ModelAuthError(_CodedError):
    code = "model_auth_error"


class ModelContentFiltered(_CodedError):
    code = "model_content_filtered"


class ModelBadResponse(_CodedError):
    """Malformed JSON or SSE from the server, or output that does not parse.

    Retryable as such; ``ModelClient`` still refuses to retry a stream that already
    yielded text, because the caller has shown that text to someone.
    """

    code = "model_bad_response"
    default_retryable = True


class ModelCancelled(_CodedError):
    """The caller's cancel event fired; the in-flight request was aborted."""

    code = "model_cancelled"
