"""The bundled local model in a process of its own, speaking OpenAI chat completions.

Native model code can kill the process it runs in: an illegal instruction on a CPU the
build did not expect, an abort on memory exhaustion. Here such a crash takes down only this
process; its supervisor (``local_supervisor``) starts it again, and the turn that lost it
ends with ``model_unavailable`` while daphne and the workers carry on.

``python -m roleplay.llm.local_server --port N --model PATH [--ctx 8192] [--threads N]
[--cache-mb 256] [--no-cache]`` loads the model, then listens on 127.0.0.1. The model is a
*base* model, so chat is rendered as a plain transcript (``transcript.py``) and generation
stops at the next speaker's prefix. Structured calls (a JSON-schema ``response_format`` or
tools) are constrained by a llama.cpp JSON-schema grammar, so their output always parses.
One generation at a time (a llama.cpp context is not thread-safe); a request waiting for the
model, or streaming, stops as soon as its client hangs up.

Prompt caching: llama.cpp keeps the last prompt's keys and values in its context, so a
prompt that starts like the one before is processed only from where they differ; an
in-memory cache of ``--cache-mb`` (``prompt_states``) keeps a context about to be
overwritten, so a turn's prompt finds its prefix again after another call (a memory
extraction, a director) took the context in between. ``--no-cache`` turns both off: every
prompt is processed whole. Each answer's usage says how many prompt tokens were not
processed again (``prompt_tokens_details.cached_tokens``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .prompt_states import PromptStates
from .provider import tool_functions
from .transcript import render_transcript
from .wire import ClientGone, TrackingServer, WireHandler, envelope, error_body

LOCK_POLL_SECONDS = 0.05


class PlanError(ValueError):
    """The request cannot be served as asked (answered with 400)."""


@dataclass(frozen=True)
class Plan:
    """What to generate: the prompt, where to stop, and an optional output schema."""

    prompt: str
    stop: list[str]
    schema: dict[str, Any] | None
    mode: str  # "text", "json" or "tools"
    continuing: bool = False  # extending the last reply: its next text is kept as written


def plan(request: dict[str, Any]) -> Plan:
    """Render the transcript and pick the output constraint for one request."""
    messages = request.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise PlanError("messages must be a list of objects")
    transcript = render_transcript(
        messages,
        character_name=request.get("character_name"),
        user_name=str(request.get("user_name") or "User"),
        continue_last=bool(request.get("continue_final_message")),
    )
    tool_choice = request.get("tool_choice", "auto")
    try:
        functions = tool_functions(request.get("tools")) if tool_choice != "none" else []
    except (ValueError, AttributeError) as exc:
        raise PlanError(str(exc)) from exc
    if isinstance(tool_choice, dict):
        wanted = (tool_choice.get("function") or {}).get("name")
        functions = [f for f in functions if f["name"] == wanted]
        if not functions:
            raise PlanError(f"tool_choice names an unknown tool {wanted!r}")
    if functions:
        catalogue = "\n".join(
            f"- {f['name']}: {f.get('description', '')}".rstrip(": ") for f in functions
        )
        tools_schema = {"anyOf": [_tool_schema(f) for f in functions]}
        hint = f"Tools:\n{catalogue}\nAnswer with one tool call as JSON."
        return Plan(_with_hint(transcript.prompt, hint), [], tools_schema, "tools")
    schema = _response_schema(request.get("response_format"))
    if schema is not None:
        hint = "Answer with JSON matching this schema: " + json.dumps(schema)
        return Plan(_with_hint(transcript.prompt, hint), [], schema, "json")
    continuing = bool(request.get("continue_final_message"))
    return Plan(transcript.prompt, transcript.stop, None, "text", continuing)


def _tool_schema(function: dict[str, Any]) -> dict[str, Any]:
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    return {
        "type": "object",
        "properties": {"name": {"const": function["name"]}, "arguments": parameters},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def _response_schema(response_format: Any) -> dict[str, Any] | None:
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        if not isinstance(schema, dict):
            raise PlanError("response_format json_schema has no schema object")
        return schema
    if kind == "json_object":
        return {"type": "object"}
    return None


def _with_hint(prompt: str, hint: str) -> str:
    """Insert ``hint`` just before the final ``Speaker:`` line of the transcript."""
    head, _, last = prompt.rpartition("\n")
    return f"{head}\n({hint})\n{last}" if head else f"({hint})\n{last}"


@dataclass
class Generated:
    """The end of a generation: why it stopped and what it cost."""

    finish_reason: str = "stop"
    prompt_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


class LocalModel:
    """One llama.cpp model; ``generate`` yields text pieces, one generation at a time.

    ``cache_mb`` sizes the in-memory prompt cache (0: none); ``caching`` False processes
    every prompt whole, as a server without a prompt cache would."""

    def __init__(
        self,
        path: str,
        n_ctx: int,
        n_threads: int,
        name: str,
        *,
        cache_mb: int = 0,
        caching: bool = True,
    ) -> None:
        import llama_cpp

        self.name = name
        self.llm: Any = llama_cpp.Llama(
            model_path=path, n_ctx=n_ctx, n_threads=n_threads, verbose=False
        )
        self.caching = caching
        self.states = PromptStates(self.llm, (cache_mb << 20) if caching else 0)
        self.lock = threading.Lock()

    def reusable(self, tokens: list[int]) -> int:
        """Ready the context for ``tokens`` and say how many leading ones need no
        processing: the longest prefix held in the context or brought back from the prompt
        cache. llama.cpp processes at least the last token again, so at most all but one."""
        if not self.caching:
            self.llm.reset()  # forget the context: the whole prompt is processed again
            return 0
        return max(0, min(self.states.prepare(tokens), len(tokens) - 1))

    def generate(self, plan: Plan, request: dict[str, Any], done: Generated) -> Iterator[str]:
        """Yield the reply's pieces; fills ``done`` when generation ends normally."""
        llm = self.llm
        tokens = llm.tokenize(plan.prompt.encode("utf-8"), add_bos=True, special=False)
        room = llm.n_ctx() - len(tokens)
        if room <= 0:
            raise PlanError(
                f"prompt of {len(tokens)} tokens does not fit the {llm.n_ctx()}-token context"
            )
        done.cached_tokens = self.reusable(tokens)
        grammar = None
        if plan.schema is not None:
            import llama_cpp

            grammar = llama_cpp.LlamaGrammar.from_json_schema(
                json.dumps(plan.schema), verbose=False
            )
        generator: Any = llm.create_completion(
            tokens,
            max_tokens=min(_int(request.get("max_tokens"), 256), room),
            temperature=_float(request.get("temperature"), 0.8),
            top_p=_float(request.get("top_p"), 1.0),
            seed=request.get("seed") if isinstance(request.get("seed"), int) else None,
            stop=plan.stop or None,
            grammar=grammar,
            stream=True,
        )
        pieces: list[str] = []
        try:
            for chunk in generator:
                choice = chunk["choices"][0]
                if choice["text"]:
                    pieces.append(choice["text"])
                    yield choice["text"]
                if choice.get("finish_reason"):
                    done.finish_reason = choice["finish_reason"]
        finally:
            generator.close()
        output = "".join(pieces)
        done.prompt_tokens = len(tokens)
        done.output_tokens = len(llm.tokenize(output.encode("utf-8"), add_bos=False))


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and value > 0 else default


def _float(value: Any, default: float) -> float:
    return float(value) if isinstance(value, int | float) else default


class _Handler(WireHandler):
    server: _ModelServer

    def do_GET(self) -> None:
        path = self.path.rstrip("/")
        model = self.server.model
        if path == "/health":
            self.send_json(200, {"ok": True, "model": model.name, "pid": os.getpid()})
        elif path == "/v1/models":
            entry = {"id": model.name, "object": "model", "owned_by": "local"}
            self.send_json(200, {"object": "list", "data": [entry]})
        else:
            self.send_json(404, error_body(404, f"no route {self.path}"))

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self.send_json(404, error_body(404, f"no route {self.path}"))
            return
        request = self.read_json()
        if request is None:
            return
        try:
            chosen = plan(request)
        except PlanError as exc:
            self.send_json(400, error_body(400, str(exc)))
            return
        model = self.server.model
        try:
            while not model.lock.acquire(timeout=LOCK_POLL_SECONDS):
                if self.client_gone():
                    raise ClientGone("client left while waiting for the model")
            try:
                self._answer(model, chosen, request)
            finally:
                model.lock.release()
        except (ClientGone, ConnectionError):
            self.close_connection = True

    def _answer(self, model: LocalModel, chosen: Plan, request: dict[str, Any]) -> None:
        done = Generated()
        pieces = model.generate(chosen, request, done)
        if not request.get("stream"):
            try:
                text = "".join(pieces)
            except PlanError as exc:
                self.send_json(400, error_body(400, str(exc)))
                return
            message, finish = _message(chosen, text, done.finish_reason)
            body = envelope(model.name, "chat.completion")
            body["choices"] = [{"index": 0, "message": message, "finish_reason": finish}]
            body["usage"] = _usage(done)
            self.send_json(200, body)
            return
        base = envelope(model.name, "chat.completion.chunk")

        def event(delta: dict[str, Any], finish: str | None = None) -> None:
            self.event(dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}]))

        try:
            first = next(pieces, None)
        except PlanError as exc:
            self.send_json(400, error_body(400, str(exc)))
            return
        self.start_stream()
        event({"role": "assistant", "content": ""})
        rest = itertools.chain([first] if first is not None else [], pieces)
        if chosen.mode == "text":
            leading = not chosen.continuing
            for piece in rest:
                if leading:  # the model continues after "Name:", so drop the space
                    piece = piece.lstrip()
                    leading = not piece
                if piece:
                    event({"content": piece})
                if self.client_gone():
                    raise ClientGone("client left during generation")
            event({}, done.finish_reason)
        else:
            collected = []
            for piece in rest:
                collected.append(piece)
                if self.client_gone():
                    raise ClientGone("client left during generation")
            message, finish = _message(chosen, "".join(collected), done.finish_reason)
            if message.get("tool_calls"):
                event({"tool_calls": [dict(message["tool_calls"][0], index=0)]})
            else:
                event({"content": message["content"]})
            event({}, finish)
        self.event(dict(base, choices=[], usage=_usage(done)))
        self.end_stream()


def _message(chosen: Plan, text: str, finish_reason: str) -> tuple[dict[str, Any], str]:
    """The assistant message for ``text`` under the plan's output mode."""
    if chosen.mode == "text":
        content = text if chosen.continuing else text.lstrip()
        return {"role": "assistant", "content": content}, finish_reason
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        return {"role": "assistant", "content": text}, finish_reason  # a truncated reply
    if chosen.mode == "json":
        return {"role": "assistant", "content": json.dumps(parsed, ensure_ascii=False)}, (
            finish_reason
        )
    call = {
        "id": f"call_{uuid.uuid4().hex[:12]}",
        "type": "function",
        "function": {"name": parsed["name"], "arguments": json.dumps(parsed.get("arguments"))},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"


def _usage(done: Generated) -> dict[str, Any]:
    return {
        "prompt_tokens": done.prompt_tokens,
        "completion_tokens": done.output_tokens,
        "total_tokens": done.prompt_tokens + done.output_tokens,
        "prompt_tokens_details": {"cached_tokens": done.cached_tokens},
    }


class _ModelServer(TrackingServer):
    allow_reuse_address = True  # a restart takes the port its predecessor held

    def __init__(self, port: int, model: LocalModel) -> None:
        self.model = model
        super().__init__(("127.0.0.1", port), _Handler)


def default_threads() -> int:
    """All cores but one: the web process, Redis and PostgreSQL need a core to answer."""
    return max(1, (os.cpu_count() or 1) - 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", required=True, help="path of a GGUF file")
    parser.add_argument("--name", default="local")
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=default_threads())
    parser.add_argument("--cache-mb", type=int, default=0, help="in-memory prompt cache")
    parser.add_argument("--no-cache", action="store_true", help="process every prompt whole")
    args = parser.parse_args(argv)
    started = time.monotonic()
    model = LocalModel(
        args.model,
        args.ctx,
        args.threads,
        args.name,
        cache_mb=max(0, args.cache_mb),
        caching=not args.no_cache,
    )
    server = _ModelServer(args.port, model)
    print(
        json.dumps({"listening": args.port, "load_s": round(time.monotonic() - started, 2)}),
        flush=True,
    )
    server.serve_forever()


if __name__ == "__main__":
    main()
