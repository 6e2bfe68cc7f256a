"""The one way a capability plugs into a turn: a :class:`TurnPlugin` (``docs/turn-plugins.md``).

A plug-in has a ``name``, says which plug-ins it runs ``after`` and ``before`` (by name),
and implements any of these hooks, each optional:

- ``admit(conversation, kind, content)``: before anything of the turn is stored, on the
  database thread, from every door (socket, REST): raise a coded error to refuse the turn
  (nothing is stored); ``content`` is what the player sent (``""`` but for ``chat``). It
  may return warnings (events with a ``type``, say ``moderation.warning``) for a turn it
  lets through: kept in the turn's ``trace["warnings"]``, sent to the conversation's
  sockets after ``turn.started`` and before the reply streams, and in the REST answer.
- ``read(ctx, conversation)``: cheap and synchronous, on the database thread that loads the
  context (``context.load_context``); the turn's batched reads go here. Its time is
  ``trace["hooks_ms"]`` under the plug-in's name.
- ``prepare``: a :class:`~.phases.Phase` run before the Actor (deadline, cancel, progress,
  ``required``, ``applies``, ``kinds``: ``phases.run_stage``).
- ``tools(ctx)`` / ``call(ctx, call)``: the tools offered to the Actor this turn, and the
  answer (a JSON object) to one of its calls, between streaming rounds.
- ``generate(ctx, reply)``: drive the reply instead of the one direct Actor call: stream
  it in segments (``reply.segment(max_tokens=..., separator=...)``, each a normal Actor
  call) and return True; False leaves the turn to the next plug-in, then to the direct
  call (``turns.reply``). The front tool loop is one.
- ``beside(ctx)``: a durable record written with the reply, in the transaction that
  commits it, for a turn that entered the Actor (the Agent V2 background run).
- ``after_commit``: a Phase run once the reply is committed, before ``turn.completed``.
- ``after_reply(ctx)``: a small write (a "last used" stamp) run on the database thread
  after ``turn.completed``, before the ``settle`` phases; a failure is only logged.
- ``settle``: a Phase run after ``turn.completed`` (post-turn work).

A plug-in keeps what one hook leaves for another in a typed slot of the context
(``ctx.slot(SomeState)``). The registry (:data:`PLUGINS`) orders the plug-ins once, when
one is registered (a topological sort of ``after``/``before``, ties in registration
order), so a turn walks ready-made tuples; a cycle or an unknown name is reported by
``manage.py check`` (:func:`check_plugins`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar

from django.core import checks

from console.failures import DomainError
from roleplay.models import TurnKind

if TYPE_CHECKING:
    from roleplay.llm.types import CompletionResult, ToolCall

    from .context import TurnContext
    from .phases import Phase, Stage
    from .reply import Reply

# Rounds of tool calls a reply may take; the last offers no tools, so the reply ends in text.
TOOL_ROUNDS = 3
# A plug-in's Phase attribute for each stage of ``phases.run_stage``.
STAGE_HOOKS: dict[str, str] = {
    "pre_actor": "prepare",
    "committed": "after_commit",
    "post_turn": "settle",
}


class PluginFailed(DomainError):
    """A plug-in fails the turn with ``code`` (a required phase, a read that cannot go on):
    ``PluginFailed(code, message)``."""

    kind = "unavailable"


class TurnPlugin:
    """The base of every turn plug-in: override the hooks it implements (module doc)."""

    name: ClassVar[str] = ""
    after: ClassVar[tuple[str, ...]] = ()
    before: ClassVar[tuple[str, ...]] = ()
    prepare: ClassVar[Phase | None] = None
    after_commit: ClassVar[Phase | None] = None
    settle: ClassVar[Phase | None] = None

    def admit(self, conversation, kind: str, content: str) -> list[dict] | None:
        """Refuse the turn before anything is stored by raising a coded error; or let it
        through, with warnings for the player (events)."""

    def read(self, ctx: TurnContext, conversation) -> None:
        """The turn's reads and what it adds to the context before any phase."""

    def tools(self, ctx: TurnContext) -> list[dict[str, Any]] | None:
        """The tools (OpenAI function specs) offered to the Actor this turn, or None."""
        return None

    async def call(self, ctx: TurnContext, call: ToolCall) -> dict[str, Any]:
        """The answer to one call of a tool this plug-in offered (a call of a name no
        plug-in offered comes to the first that offered any: answer it as unknown)."""
        raise NotImplementedError

    async def generate(self, ctx: TurnContext, reply: Reply) -> bool:
        """Stream the reply through ``reply`` (segments) and return True, or return False
        (before streaming anything) to leave it to the direct Actor call."""
        return False

    def beside(self, ctx: TurnContext) -> Callable[[], None] | None:
        """A record to write with the reply (in its transaction, in a savepoint), or None."""
        return None

    def after_reply(self, ctx: TurnContext) -> Callable[[], None] | None:
        """A small write to make once the reply is committed and the player has it (off the
        path to the first delta), on the database thread; None for none."""
        return None


def _overrides(plugin: TurnPlugin, hook: str) -> bool:
    return getattr(type(plugin), hook) is not getattr(TurnPlugin, hook)


class Registry:
    """The registered plug-ins, and per hook the ones that implement it, in order."""

    def __init__(self) -> None:
        self._plugins: dict[str, TurnPlugin] = {}
        self.problems: list[tuple[str, str]] = []  # (check id, message)
        self._build()

    def register(self, plugin: TurnPlugin) -> None:
        """Add ``plugin`` (one of the same name replaces the earlier one, in its place)."""
        if not plugin.name:
            raise ValueError(f"{type(plugin).__name__} has no name")
        self._plugins[plugin.name] = plugin
        self._build()

    def unregister(self, name: str) -> None:
        self._plugins.pop(name, None)
        self._build()

    def get(self, name: str) -> TurnPlugin:
        return self._plugins[name]

    def __iter__(self) -> Iterator[TurnPlugin]:
        return iter(self.ordered)

    @contextmanager
    def using(self, plugins: Iterable[TurnPlugin]):
        """Only ``plugins`` while the block runs (a bench timing hooks on their own, a test
        leaving one out); the registered ones afterwards."""
        saved = self._plugins
        self._plugins = {p.name: p for p in plugins}
        self._build()
        try:
            yield self
        finally:
            self._plugins = saved
            self._build()

    def stage(self, stage: Stage, kind: str) -> tuple[Phase, ...]:
        """The phases of ``stage`` that run for a turn of ``kind``, in order."""
        return self._stages.get((stage, kind), ())

    def _build(self) -> None:
        """Order the plug-ins and lay out each hook's callers: once, here, never per turn."""
        self.ordered, self.problems = _ordered(list(self._plugins.values()))
        self.readers: tuple[tuple[str, Callable], ...] = tuple(
            (p.name, p.read)  # timed under the plug-in's name in trace["hooks_ms"]
            for p in self.ordered
            if _overrides(p, "read")
        )
        self.admitters = tuple(p.admit for p in self.ordered if _overrides(p, "admit"))
        self.toolers = tuple(p for p in self.ordered if _overrides(p, "tools"))
        self.generators = tuple(p.generate for p in self.ordered if _overrides(p, "generate"))
        self.besides = tuple(p.beside for p in self.ordered if _overrides(p, "beside"))
        self.after_replies = tuple(
            p.after_reply for p in self.ordered if _overrides(p, "after_reply")
        )
        stages: dict[tuple[str, str], tuple] = {}
        for stage, hook in STAGE_HOOKS.items():
            for kind in TurnKind.values:
                found = [getattr(p, hook) for p in self.ordered]
                stages[(stage, kind)] = tuple(
                    ph for ph in found if ph is not None and kind in ph.kinds
                )
        self._stages = stages


def _ordered(plugins: list[TurnPlugin]) -> tuple[tuple[TurnPlugin, ...], list[tuple[str, str]]]:
    """The plug-ins sorted so each comes after those it names in ``after`` and before those
    in ``before``; among those free to go, the earlier registered first. With a cycle or an
    unknown name, the registration order and the problems (for the system check)."""
    names = {p.name for p in plugins}
    index = {p.name: i for i, p in enumerate(plugins)}
    problems: list[tuple[str, str]] = []
    edges: dict[str, set[str]] = {p.name: set() for p in plugins}  # name -> must come first
    for p in plugins:
        for other in p.after:
            if other in names:
                edges[p.name].add(other)
            else:
                problems.append(
                    ("roleplay.E002", f"turn plug-in {p.name!r}: after unknown {other!r}")
                )
        for other in p.before:
            if other in names:
                edges[other].add(p.name)
            else:
                problems.append(
                    ("roleplay.E002", f"turn plug-in {p.name!r}: before unknown {other!r}")
                )
    done: list[str] = []
    waiting = dict(edges)
    while waiting:
        free = [n for n, first in waiting.items() if not first - set(done)]
        if not free:
            cycle = ", ".join(sorted(waiting, key=index.__getitem__))
            problems.append(("roleplay.E001", f"turn plug-ins order in a cycle: {cycle}"))
            return tuple(plugins), problems
        chosen = min(free, key=index.__getitem__)
        done.append(chosen)
        del waiting[chosen]
    by_name = {p.name: p for p in plugins}
    return tuple(by_name[n] for n in done), problems


PLUGINS = Registry()
register = PLUGINS.register


@checks.register()
def check_plugins(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """``manage.py check``: the turn plug-ins' order has no cycle and names no unknown one."""
    return [checks.Error(message, id=code) for code, message in PLUGINS.problems]


def offered_tools(ctx: TurnContext) -> tuple[list[dict[str, Any]] | None, dict[str, TurnPlugin]]:
    """(the tools offered to the Actor this turn or None, which plug-in answers each name)."""
    specs: list[dict[str, Any]] = []
    owners: dict[str, TurnPlugin] = {}
    for plugin in PLUGINS.toolers:
        offered = plugin.tools(ctx)
        if not offered:
            continue
        specs.extend(offered)
        for spec in offered:
            owners.setdefault(spec["function"]["name"], plugin)
    return (specs or None), owners


async def answer_calls(
    ctx: TurnContext, owners: dict[str, TurnPlugin], result: CompletionResult
) -> list[dict[str, Any]]:
    """The messages that carry ``result``'s calls and their answers back to the model."""
    fallback = next(iter(owners.values()))
    calls, replies = [], []
    for call in result.tool_calls:
        outcome = await owners.get(call.name, fallback).call(ctx, call)
        calls.append(
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
        )
        replies.append(
            {
                "role": "tool",
                "tool_call_id": call.id,
                "content": json.dumps(outcome, ensure_ascii=False),
            }
        )
    return [{"role": "assistant", "content": result.content or None, "tool_calls": calls}, *replies]
