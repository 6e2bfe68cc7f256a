"""The console's "test this config" button: one short streamed reply through the real
gateway, to a prompt shaped as a turn's (a system message, the character's opening, the
player's line), so a server that streams badly or refuses that order of roles shows here
rather than in the first chat.

It writes only the ``ModelCall`` the gateway records for every call (purpose
``console_test``), so the test shows up in usage like any other call.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from asgiref.sync import async_to_sync

from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.provider import Provider
from roleplay.llm.roles import AS_SENT
from roleplay.llm.types import CompletionResult, ModelRequest, StreamDone
from roleplay.models import ModelConfig

logger = logging.getLogger(__name__)

TEST_PROMPT = [
    {"role": "system", "content": "You are Mira, a lighthouse keeper, in a roleplay."},
    {"role": "assistant", "content": "Welcome to the lighthouse."},
    {"role": "user", "content": "Say hello in five words."},
]
TEST_MAX_TOKENS = 16
TEST_PURPOSE = "console_test"
_ERROR_MESSAGE_MAX = 500
# Failures a list of models cannot explain: the server is not there, or refused the key.
_NOT_ABOUT_THE_MODEL = {"model_connection_error", "model_timeout", "model_auth_error"}


@dataclass(frozen=True)
class ConfigTestResult:
    """What the console shows after a test completion: the text and figures, or the error."""

    ok: bool
    latency_ms: float
    text: str = ""
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    attempts: int = 0
    error_code: str | None = None
    error_message: str | None = None
    # After a failure: the models the server lists (GET /models), when it answers, so a
    # model name the server does not know shows beside the ones it does.
    offered_models: tuple[str, ...] = ()
    # After a success: what the operator should know (an empty reply, a reshaped order).
    warnings: tuple[str, ...] = ()


def run_config_test(tenant, config: ModelConfig) -> ConfigTestResult:
    """One short completion through the real gateway (recorded as a ModelCall).

    Every failure becomes a result with a code, so the console shows it instead of a 500:
    gateway errors keep their stable code; a provider that cannot even be built (a missing
    local runtime, an invalid config) is ``provider_unavailable``.
    """
    started = time.perf_counter()

    def elapsed() -> float:
        return round((time.perf_counter() - started) * 1000, 1)

    gateway: Gateway | None = None
    try:
        gateway = Gateway(tenant, config, TEST_PURPOSE)
        request = ModelRequest(TEST_PROMPT, max_tokens=TEST_MAX_TOKENS)
        result = async_to_sync(_streamed)(gateway, request)
    except ModelError as exc:
        return ConfigTestResult(
            ok=False,
            latency_ms=elapsed(),
            error_code=exc.code,
            error_message=exc.message[:_ERROR_MESSAGE_MAX],
            offered_models=_offered(gateway, exc),
        )
    except Exception as exc:  # the console must show it, not crash
        logger.warning("model config test failed", exc_info=True)
        return ConfigTestResult(
            ok=False,
            latency_ms=elapsed(),
            error_code="provider_unavailable",
            error_message=f"{type(exc).__name__}: {exc}"[:_ERROR_MESSAGE_MAX],
        )
    return ConfigTestResult(
        ok=True,
        latency_ms=round(result.latency_ms, 1),
        text=result.content,
        model=result.model,
        input_tokens=result.usage.input_tokens,
        output_tokens=result.usage.output_tokens,
        total_tokens=result.usage.total_tokens,
        attempts=result.attempts,
        warnings=_warnings(config, gateway.client.provider, result.content),
    )


def _offered(gateway: Gateway | None, failure: ModelError) -> tuple[str, ...]:
    """The models the config's server lists, after a failure it may explain (the server
    answered, and not with "who are you"); empty when it lists none or cannot say."""
    if gateway is None or failure.code in _NOT_ABOUT_THE_MODEL:
        return ()
    try:
        return tuple(async_to_sync(gateway.client.provider.models)())
    except Exception:  # a hint only: the test's own error is what the console shows
        logger.info("the server of model %s lists no models", gateway.pconfig.model, exc_info=True)
        return ()


async def _streamed(gateway: Gateway, request: ModelRequest) -> CompletionResult:
    result = None
    async for event in gateway.stream(request):
        if isinstance(event, StreamDone):
            result = event.result
    assert result is not None  # a stream ends with StreamDone or raises
    return result


def _warnings(config: ModelConfig, provider: Provider, text: str) -> tuple[str, ...]:
    found = []
    if not text.strip():
        found.append(
            "The model answered with no text: check the model name, and that the server "
            "runs a chat (instruction-tuned) model with its chat template."
        )
    level = getattr(provider, "role_level", AS_SENT)
    if config.role_order == "auto" and level != AS_SENT:
        found.append(
            f"The server refused the order of the messages; they are sent as {level!r} "
            f"from now on. Set Message order to {level!r} to keep this after a restart."
        )
    return tuple(found)
