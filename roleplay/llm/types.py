"""Plain data passed in and out of the model gateway.

Dataclasses rather than dicts so that every caller (Django services, Celery tasks, the pure
engines) sees the same typed shapes, and so that the recorder contract is explicit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ProviderKind = Literal["openai_compatible", "llama_cpp", "text_completion"]
Outcome = Literal["ok", "error", "cancelled"]

PROVIDER_KINDS: tuple[str, ...] = ("openai_compatible", "llama_cpp", "text_completion")
# Whether to ask the server to cache the prompt's prefix (``docs/llm.md``): ``auto`` leaves
# an HTTP server to its own default and keeps the bundled model's prompt cache; ``on`` and
# ``off`` send llama.cpp's ``cache_prompt`` (true or false) and switch the bundled one.
PROMPT_CACHE_MODES: tuple[str, ...] = ("auto", "on", "off")
DEFAULT_PROMPT_CACHE_MB = 256


@dataclass(frozen=True)
class ProviderConfig:
    """Everything a provider needs to talk to one model; resolved by the Django side.

    ``api_key`` is the secret itself (the console reads it from an environment variable
    named in the ModelConfig); ``extra`` carries provider-specific parameters that are sent
    as-is (``extra_body`` for HTTP, llama.cpp options such as ``n_threads`` locally).
    """

    provider: ProviderKind
    model: str
    base_url: str = ""
    api_key: str | None = None
    context_limit: int = 8192
    max_output_tokens: int = 1024
    temperature: float = 0.8
    top_p: float = 1.0
    timeout_ms: int = 60000
    extra: dict[str, Any] = field(default_factory=dict)
    # How messages are ordered for an HTTP server: ``auto``, ``strict`` or ``no_system``
    # (``roleplay.llm.roles``).
    role_order: str = "auto"
    prompt_cache: str = "auto"
    # The bundled model's in-memory prompt cache (saved model states by prompt prefix).
    prompt_cache_mb: int = DEFAULT_PROMPT_CACHE_MB
    # A ``text_completion`` server (``roleplay.textgen``): its API's shape (``koboldcpp``,
    # ``llamacpp``, ``openai_completions``), the instruct template (``{"instruct": {...},
    # "context": {...} | None}`` in the engine's shape) and the set samplers by our names.
    wire: str = ""
    template: dict[str, Any] = field(default_factory=dict)
    samplers: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.provider not in PROVIDER_KINDS:
            raise ValueError(f"unknown provider {self.provider!r}; expected {PROVIDER_KINDS}")
        if self.prompt_cache not in PROMPT_CACHE_MODES:
            raise ValueError(f"unknown prompt_cache {self.prompt_cache!r}")
        if self.prompt_cache_mb < 0:
            raise ValueError("prompt_cache_mb must not be negative")
        if self.context_limit <= 0 or self.max_output_tokens <= 0:
            raise ValueError("context_limit and max_output_tokens must be positive")
        if self.timeout_ms <= 0:
            raise ValueError("timeout_ms must be positive")

    @property
    def timeout_s(self) -> float:
        """The default per-request timeout in seconds, the unit the SDKs take."""
        return self.timeout_ms / 1000.0


@dataclass(frozen=True)
class ModelRequest:
    """One call to a model, as every provider and the gateway take it.

    ``tools`` in the OpenAI shape or bare functions; ``tool_choice`` "auto", "none",
    "required" or ``{"type": "function", "function": {"name": ...}}``; ``response_format``
    as OpenAI's (``json_schema`` / ``json_object``). ``None`` for ``max_tokens`` and
    ``temperature`` means the config's value; ``timeout`` (seconds) the config's timeout.
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] = "auto"
    parallel_tool_calls: bool = True
    response_format: dict[str, Any] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    timeout: float | None = None
    # The last message is an assistant reply to go on from (a continue), not to answer.
    continue_final_message: bool = False
    # A stream that ends without a ``finish_reason`` is taken as finished ("stop") rather
    # than refused as a bad response (Agent V2's ``recovery.tolerateMissingStreamMetadata``).
    tolerate_missing_stream_metadata: bool = False
    # Who speaks, for a text-completion server's instruct template (its name labels and
    # ``{{char}}``/``{{user}}``); chat servers do not need them.
    char_name: str | None = None
    user_name: str | None = None


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for; ``arguments`` is already parsed JSON."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Usage:
    """Token counts of one call, as the provider reported them (or as we counted them).

    ``cached_tokens``: how many of the input tokens the server took from its prompt cache
    (``prompt_tokens_details.cached_tokens``); 0 when it did not say."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0

    @classmethod
    def of(cls, input_tokens: int, output_tokens: int) -> Usage:
        return cls(input_tokens, output_tokens, input_tokens + output_tokens)


@dataclass(frozen=True)
class CompletionResult:
    """A finished completion: text and/or tool calls, with usage and timing.

    ``attempts`` and ``latency_ms`` describe the whole gateway call (retries and backoff
    included) once ``ModelClient`` returns it; a bare provider reports one attempt.
    ``reasoning``: the model's scratchpad, taken off ``content`` (``roleplay.llm.reasoning``).
    """

    content: str
    tool_calls: list[ToolCall]
    usage: Usage
    model: str
    finish_reason: str
    latency_ms: float
    attempts: int = 1
    reasoning: str = ""


@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed reply text, in order; the pieces concatenate to the content."""

    text: str


@dataclass(frozen=True)
class StreamDone:
    """The last event of a successful stream, carrying the assembled result."""

    result: CompletionResult


StreamEvent = TextDelta | StreamDone


@dataclass(frozen=True)
class CallRecord:
    """What the recorder receives exactly once per gateway call, whatever its outcome."""

    purpose: str
    model: str
    outcome: Outcome
    error_code: str | None
    usage: Usage
    latency_ms: float
    attempts: int
    error_message: str | None = None
