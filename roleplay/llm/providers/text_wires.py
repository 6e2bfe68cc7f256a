"""The three text-completion wires: where each server takes a raw prompt, the body it takes
(its own names for the length, the stop strings and the samplers) and how its answers (whole,
or one streamed event at a time) read. ``text_completion`` does the HTTP.

- ``koboldcpp``: ``POST /api/v1/generate`` (``{"results": [{"text"}]}``) and
  ``POST /api/extra/generate/stream`` (SSE ``event: message`` / ``data: {"token"}``);
- ``llamacpp``: llama.cpp server's ``POST /completion`` (``{"content", "stop"}``, usage in
  ``tokens_evaluated``/``tokens_predicted``, cached prompt tokens in ``timings.cache_n``);
- ``openai_completions``: ``POST /v1/completions`` (vLLM, text-generation-webui), text in
  ``choices[0].text``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roleplay.textgen.engine import wire_samplers

from ..types import ModelRequest, ProviderConfig, Usage
from .openai_answers import first_choice, json_object, json_text, read_usage


@dataclass(frozen=True)
class Piece:
    """What one answer (or one streamed event) says: text, a finish reason, usage."""

    text: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None


def server_root(base_url: str) -> str:
    """The server's root: a pasted ``.../v1`` is taken off for the wires whose paths are
    not under it (KoboldCpp, llama.cpp's ``/completion``)."""
    return base_url.rstrip("/").removesuffix("/v1")


def url(config: ProviderConfig, *, stream: bool) -> str:
    if config.wire == "koboldcpp":
        path = "/api/extra/generate/stream" if stream else "/api/v1/generate"
        return server_root(config.base_url) + path
    if config.wire == "llamacpp":
        return server_root(config.base_url) + "/completion"
    return config.base_url.rstrip("/") + "/completions"


def body(
    config: ProviderConfig, request: ModelRequest, prompt: str, stops: list[str], *, stream: bool
) -> dict[str, Any]:
    """The request body: the prompt, length and stops under the wire's names, the config's
    temperature and top_p, its set samplers, then ``extra`` for whatever is still unset."""
    max_tokens = request.max_tokens or config.max_output_tokens
    temperature = config.temperature if request.temperature is None else request.temperature
    params: dict[str, Any] = {"prompt": prompt, "temperature": temperature}
    if config.top_p is not None:
        params["top_p"] = config.top_p
    if config.wire == "koboldcpp":
        params.update(max_length=max_tokens, max_context_length=config.context_limit,
                      stop_sequence=stops)  # fmt: skip
    elif config.wire == "llamacpp":
        params.update(n_predict=max_tokens, stop=stops, stream=stream,
                      cache_prompt=config.prompt_cache != "off")  # fmt: skip
    else:
        params.update(model=config.model, max_tokens=max_tokens, stop=stops, stream=stream)
        if stream:
            params["stream_options"] = {"include_usage": True}
    params.update(wire_samplers(config.wire, config.samplers))
    for key, value in (config.extra or {}).items():
        params.setdefault(key, value)
    return params


def read_whole(wire: str, answer: Any) -> Piece:
    """A non-streamed answer."""
    answer = json_object(answer, "response")
    if wire == "koboldcpp":
        results = answer.get("results")
        if not isinstance(results, list) or not results:
            raise ValueError("no results in the response")
        first = json_object(results[0], "result")
        finish = json_text(first.get("finish_reason"), "finish_reason") or "stop"
        return Piece(json_text(first.get("text"), "text"), finish)
    if wire == "llamacpp":
        return _llama(answer, final=True)
    choice = first_choice(answer)
    finish = json_text(choice.get("finish_reason"), "finish_reason") or "stop"
    return Piece(json_text(choice.get("text"), "text"), finish, read_usage(answer.get("usage")))


def read_event(wire: str, data: Any) -> Piece:
    """One streamed event's JSON."""
    data = json_object(data, "stream event")
    if wire == "koboldcpp":
        finish = data.get("finish_reason")
        return Piece(
            json_text(data.get("token"), "token"), finish if isinstance(finish, str) else None
        )
    if wire == "llamacpp":
        return _llama(data, final=bool(data.get("stop")))
    usage = read_usage(data.get("usage")) if data.get("usage") is not None else None
    choices = data.get("choices") or []
    if not choices:
        return Piece(usage=usage)
    choice = json_object(choices[0], "choice")
    finish = choice.get("finish_reason")
    return Piece(
        json_text(choice.get("text"), "text"), finish if isinstance(finish, str) else None, usage
    )


def _llama(data: dict[str, Any], *, final: bool) -> Piece:
    text = json_text(data.get("content"), "content")
    if not final:
        return Piece(text)
    finish = "length" if data.get("stop_type") == "limit" or data.get("truncated") else "stop"
    prompt, output = data.get("tokens_evaluated"), data.get("tokens_predicted")
    usage = None
    if isinstance(prompt, int) and isinstance(output, int):
        timings = data.get("timings")
        timings = timings if isinstance(timings, dict) else {}
        cached = timings.get("cache_n", data.get("tokens_cached", 0))
        cached = cached if isinstance(cached, int) and 0 <= cached <= prompt else 0
        usage = Usage(prompt, output, prompt + output, cached)
    return Piece(text, finish, usage)
