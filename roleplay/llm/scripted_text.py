"""The scripted server's text-completion routes: KoboldCpp's ``/api/v1/generate`` and
``/api/extra/generate/stream``, llama.cpp's ``/completion`` and OpenAI's ``/v1/completions``,
answering from the same script (``Reply``) and recording each request body (the rendered
prompt, the samplers) beside the chat requests, so tests check what a server received.

A reply's ``content`` is streamed word by word (or in ``chunks`` pieces); ``status``,
``malformed``, ``cut_after``, ``hang``, ``delay`` and ``chunk_delay`` behave as for chat."""

from __future__ import annotations

import json
from typing import Any

from console.tokens import count_tokens

from .wire import error_body

ROUTES = {
    "/api/v1/generate": "koboldcpp",
    "/api/extra/generate/stream": "koboldcpp",
    "/completion": "llamacpp",
    "/v1/completions": "openai_completions",
}


def wire_of(path: str) -> str | None:
    """Which wire a request path is (None: not a text-completion route)."""
    return ROUTES.get(path.rstrip("/"))


def streams(path: str, request: dict[str, Any]) -> bool:
    if path.rstrip("/") == "/api/extra/generate/stream":
        return True
    return bool(request.get("stream")) and "/api/v1/" not in path


def answer(
    handler: Any, wire: str, request: dict[str, Any], reply: Any, pieces: list[str], *, stream: bool
) -> None:
    """Answer one text-completion request with ``reply`` (after its delay or fault),
    streaming its content in ``pieces``."""
    stopping = handler.owner._stopping
    if reply.hang:
        while True:
            handler.wait(1.0, stopping)
    handler.wait(reply.delay, stopping)
    if reply.status != 200:
        headers = {"Retry-After": f"{reply.retry_after:g}"} if reply.retry_after is not None else {}
        body = reply.error_body or error_body(reply.status, "scripted failure")
        handler.send_json(reply.status, body, headers)
        return
    if not stream:
        if reply.malformed:
            handler.send_raw(200, b'{"results": [', "application/json")
            return
        handler.send_json(200, _whole(wire, request, reply))
        return
    handler.start_stream()
    if reply.malformed:
        handler.chunk(b'data: {"token": \n\n')
        handler.end_stream(done=False)
        return
    for sent, piece in enumerate(pieces):
        if reply.cut_after is not None and sent >= reply.cut_after:
            handler.cut()
            return
        if sent and reply.chunk_delay:
            handler.wait(reply.chunk_delay, stopping)
        _event(handler, wire, _delta(wire, piece))
    if reply.cut_after is not None:
        handler.cut()
        return
    _event(handler, wire, _last(wire, request, reply))
    handler.end_stream(done=wire == "openai_completions")


def _event(handler: Any, wire: str, data: dict[str, Any]) -> None:
    if wire == "koboldcpp":
        handler.chunk(b"event: message\ndata: " + json.dumps(data).encode() + b"\n\n")
    else:
        handler.event(data)


def _delta(wire: str, text: str) -> dict[str, Any]:
    if wire == "koboldcpp":
        return {"token": text, "finish_reason": None}
    if wire == "llamacpp":
        return {"content": text, "stop": False}
    return {"object": "text_completion", "choices": [{"index": 0, "text": text,
                                                      "finish_reason": None}]}  # fmt: skip


def _counts(request: dict[str, Any], reply: Any) -> tuple[int, int]:
    return count_tokens(str(request.get("prompt") or "")), count_tokens(reply.content)


def _last(wire: str, request: dict[str, Any], reply: Any) -> dict[str, Any]:
    prompt, output = _counts(request, reply)
    if wire == "koboldcpp":
        return {"token": "", "finish_reason": reply.finish_reason}
    if wire == "llamacpp":
        return {"content": "", "stop": True, "tokens_evaluated": prompt,
                "tokens_predicted": output, "timings": {"cache_n": reply.cached_tokens or 0},
                "stop_type": "limit" if reply.finish_reason == "length" else "eos"}  # fmt: skip
    return {"object": "text_completion",
            "choices": [{"index": 0, "text": "", "finish_reason": reply.finish_reason}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": output,
                      "total_tokens": prompt + output}}  # fmt: skip


def _whole(wire: str, request: dict[str, Any], reply: Any) -> dict[str, Any]:
    if wire == "koboldcpp":
        return {"results": [{"text": reply.content, "finish_reason": reply.finish_reason}]}
    last = _last(wire, request, reply)
    if wire == "llamacpp":
        return {**last, "content": reply.content}
    last["choices"][0]["text"] = reply.content
    return last
