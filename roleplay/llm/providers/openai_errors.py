"""What the OpenAI SDK raises, as our ``ModelError`` kinds: a status (with its Retry-After),
a refused parameter, a content filter, a context overflow, a connection that failed."""

from __future__ import annotations

import email.utils
import re
import time
from typing import Any

import httpx2
import openai

from ..errors import (
    ModelAuthError,
    ModelBadRequest,
    ModelBadResponse,
    ModelConnectionError,
    ModelContentFiltered,
    ModelContextExceeded,
    ModelError,
    ModelRateLimited,
    ModelServerError,
    ModelTimeout,
)

_CONTENT_FILTER_CODES = {"content_filter", "content_policy_violation", "content_filtered"}


# A request the server's own validation refused, though it answered 500 (llama.cpp's Python
# server does, for a ``response_format`` it does not take): not retried, like a 400.
_VALIDATION_WORDS = re.compile(r"\d+ validation errors?\b.*'loc'|literal_error", re.DOTALL)


# How servers say the prompt does not fit: OpenAI's and llama.cpp's code, and the words of
# vLLM ("maximum context length"), llama.cpp's C++ server ("exceeds the available context
# size"), Ollama and others.
_CONTEXT_CODES = {"context_length_exceeded", "exceed_context_size_error"}


_CONTEXT_WORDS = re.compile(
    r"maximum context length|context (?:length|window|size) (?:exceeded|is exceeded)"
    r"|exceeds? (?:the )?(?:available )?context (?:size|window|length)"
    r"|prompt is too long|too many tokens in the prompt",
    re.IGNORECASE,
)


def refused_params(params: dict[str, Any], said: str) -> dict[str, str | None]:
    """What of ``params`` a server's refusal (its 400 or 422, ``said``) names as a parameter
    it does not take, and what to send instead: nothing (None) or the same value under
    another name. ``stream_options``, ``parallel_tool_calls`` and ``cache_prompt`` change
    nothing the call means (older and stricter servers do not know them); a sampling
    parameter the model does not support (OpenAI's reasoning models: only the default) is
    left to the server;
    ``max_tokens`` is ``max_completion_tokens`` where a server asks for that name."""
    lowered = said.lower()
    found: dict[str, str | None] = {}
    for key in params:
        if key in ("stream_options", "parallel_tool_calls", "cache_prompt") and key in said:
            found[key] = None
        elif key in ("temperature", "top_p") and key in said and "unsupported" in lowered:
            found[key] = None
        elif key == "max_tokens" and "max_completion_tokens" in said:
            found[key] = "max_completion_tokens"
    return found


def apply_refused(params: dict[str, Any], refused: dict[str, str | None]) -> None:
    for key, instead in refused.items():
        if key in params:
            value = params.pop(key)
            if instead is not None:
                params[instead] = value


def map_openai_error(exc: BaseException) -> ModelError:
    """Translate an SDK/transport exception into the gateway's error vocabulary."""
    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, openai.APITimeoutError | httpx2.TimeoutException | TimeoutError):
        return ModelTimeout(str(exc) or "request timed out")
    if isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
        return ModelConnectionError(_describe(exc))
    if isinstance(exc, openai.APIResponseValidationError):
        return ModelBadResponse(_describe(exc))
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc)
    if isinstance(exc, openai.APIError):  # an error event inside a stream
        return ModelServerError(_describe(exc))
    if isinstance(exc, ValueError):  # invalid JSON body or SSE data line
        return ModelBadResponse(f"malformed response: {exc}")
    if isinstance(exc, httpx2.HTTPError):
        return ModelConnectionError(_describe(exc))
    return ModelError("model_error", _describe(exc), False)


def _status_error(exc: openai.APIStatusError) -> ModelError:
    return status_error(exc.status_code, exc.message, exc.response.headers, exc.code)


def status_error(status: int, said: str, headers: Any, code: str | None = None) -> ModelError:
    """A server's error status as the gateway's error, whatever client met it (the OpenAI
    SDK, or the text-completion provider's plain HTTP): ``said`` is its message, ``code``
    its error code when its body gave one."""
    message = f"HTTP {status}: {said}"
    retry_after = _retry_after(headers)
    code = (code or "").lower()
    if status == 429:
        return ModelRateLimited(message, status=status, retry_after=retry_after)
    if status == 408:
        return ModelTimeout(message, status=status, retry_after=retry_after)
    if status in (401, 403):
        return ModelAuthError(message, status=status)
    if code in _CONTENT_FILTER_CODES:
        return ModelContentFiltered(message, status=status)
    if status < 500 and (code in _CONTEXT_CODES or _CONTEXT_WORDS.search(message)):
        return ModelContextExceeded(message, status=status)
    if status >= 500 and not _VALIDATION_WORDS.search(message):
        return ModelServerError(message, status=status, retry_after=retry_after)
    return ModelBadRequest(message, status=status)


def _retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _describe(exc: BaseException) -> str:
    """The exception and its transport cause: "Connection error." alone says too little."""
    text = f"{type(exc).__name__}: {exc}"
    cause = exc.__cause__
    if cause is not None and str(cause):
        text += f" ({type(cause).__name__}: {cause})"
    return text
