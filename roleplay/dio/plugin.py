"""DIO in a turn, the turn plug-in ``dio`` (``docs/dio.md``, "In the turn").

With the scenario's ``dio`` on, every turn that asks the Actor reads the active prompt of
its identity (``identity.identity_for``) before the Actor, checks its SHA-256 and puts it in
the Actor preset's character slot (``engine.slots``); the front loop's Actor calls
(``frontloop.ports.TurnPorts.run_actor``) assemble from the same ``ctx.preset``, so every
segment of the reply has it. With DIO off the phase does not apply: no query, no round trip,
no trace section.

What can go wrong, and what the turn does (the seed's split, ``002`` line 1324):

- the lookup fails (the backend's ``DioError``, an exception, no answer in ``timeoutMs``) or
  the text does not match its SHA-256 (``dio_hash_mismatch``): a degradation in
  ``trace["dio"]["degraded"]`` (code, message), and the normal prompt;
- the player cancels: the cancel propagates (the phase runner stops it);
- the prompt was read and verified but the preset has no single slot (two ``roleplay``
  prompts, several placeholders, none): the turn fails with the slot rule's code. Not a
  degradation: the scenario's Actor preset is wrong, and replying without the player's
  instructions would hide it.

The backend comes from ``roleplay.dio.backends.backend_for`` (the scenario's ``dio`` as
JSON → a :class:`~.engine.ports.DioBackend`, or None); :class:`DioPlugin` takes another
factory for a test or a bench. The backend and identity stay in :class:`DioState` for the
front loop's ``schedule_dio`` (:func:`offered`, :func:`schedule`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from roleplay.models import TurnKind
from roleplay.scenarios.config import DIO_TIMEOUT_MS, Dio
from roleplay.turns import hub
from roleplay.turns.context import TurnContext
from roleplay.turns.phases import Phase, PhaseRun
from roleplay.turns.plugin import PluginFailed, TurnPlugin

from .engine.ports import (
    ActivePrompt,
    DioBackend,
    DioError,
    Identity,
    Receipt,
    ScheduleRequest,
    dio_conversation_id,
    request_id,
)
from .engine.slots import apply_compiled, verify
from .identity import identity_for
from .reads import NOT_READ, Prefetched

logger = logging.getLogger(__name__)

Backends = Callable[[dict[str, Any], Any], DioBackend | None]
"""``backends(scenario's dio config, tenant id)``: the backend, None when off."""
# Every kind of turn that asks the Actor for a reply (auto-reply writes the player's line).
APPLY_KINDS = frozenset(
    {TurnKind.CHAT, TurnKind.REGENERATE, TurnKind.EDIT_REGENERATE, TurnKind.CONTINUE}
)
# Where ``schedule_dio`` is offered: a turn with the player's new input. A regenerate
# answers an input whose own turn could submit it already.
SCHEDULE_KINDS = frozenset({TurnKind.CHAT})
UNAVAILABLE = "dio_unavailable"
TIMEOUT = "dio_timeout"


def default_backends(config: dict[str, Any], tenant_id: Any) -> DioBackend | None:
    """The backend of a scenario's ``dio`` (the service side's factory), scoped to the
    turn's tenant."""
    from roleplay.dio.backends import backend_for

    return backend_for(config, tenant_id)


@dataclass
class DioState:
    """This turn's DIO: the backend and identity (None when DIO is off or its backend could
    not be made), the version applied, what ``schedule_dio`` submitted."""

    config: Dio | None = None
    backend: DioBackend | None = None
    identity: Identity | None = None
    applied: ActivePrompt | None = None
    receipt: dict[str, Any] | None = None
    trace: dict[str, Any] = field(default_factory=dict)

    @property
    def offered(self) -> bool:
        return self.backend is not None and self.identity is not None


def _degrade(state: DioState, code: str, message: str) -> None:
    logger.warning("DIO degraded to the normal prompt: %s %s", code, message)
    state.trace["status"] = "degraded"
    state.trace["degraded"] = {"code": code, "message": message[:300]}


async def _lookup(state: DioState, prefetched: Prefetched = NOT_READ) -> ActivePrompt | None:
    """The verified active prompt, or None (none yet, or degraded: recorded). Our own DIO's
    was read with the turn's first statement (``prefetched``, ``roleplay.dio.reads``): no
    round trip here; another backend is asked."""
    assert state.config is not None and state.backend is not None and state.identity
    try:
        if prefetched.read and state.backend.read_with_turn:
            active = prefetched.active
        else:
            async with asyncio.timeout(state.config.timeoutMs / 1000):
                active = await state.backend.active_prompt(state.identity)
        if active is not None:
            verify(active)
    except DioError as exc:
        _degrade(state, exc.code, exc.message)
        return None
    except TimeoutError:
        _degrade(state, TIMEOUT, f"no answer within {state.config.timeoutMs} ms")
        return None
    except Exception as exc:  # a backend bug or a transport error: the normal prompt
        _degrade(state, UNAVAILABLE, f"{type(exc).__name__}: {exc}")
        return None
    return active


def make_phase(backends: Backends) -> Phase:
    async def apply(ctx: TurnContext, run: PhaseRun) -> None:
        state = ctx.slot(DioState)
        state.config = config = ctx.settings.dio
        assert config is not None  # the phase applies only then
        state.trace = ctx.trace["dio"] = {"mode": config.mode}
        try:
            state.backend = backends(config.model_dump(mode="json"), ctx.conversation.tenant_id)
        except Exception as exc:
            _degrade(state, UNAVAILABLE, f"no backend: {type(exc).__name__}: {exc}")
            return
        if state.backend is None:
            state.trace["status"] = "off"
            return
        state.identity = identity_for(ctx.conversation)
        state.trace["target_prompt_id"] = state.identity.target_prompt_id
        active = await _lookup(state, ctx.dio)
        if active is None:
            state.trace.setdefault("status", "none")
            return
        try:
            replaced = apply_compiled(ctx.preset, active.compiled_prompt)
        except DioError as exc:
            state.trace["status"] = "slot_error"
            raise PluginFailed(exc.code, exc.message) from None
        ctx.preset = replaced.preset
        ctx.variables.update(replaced.variables)
        state.applied = active
        state.trace.update(
            status="applied",
            version=active.version,
            version_id=active.version_id,
            sha256=active.sha256,
            slot={"identifier": replaced.slot.identifier, "kind": replaced.slot.kind},
        )

    return Phase(
        name="dio",
        run=apply,
        kinds=APPLY_KINDS,
        # The lookup has its own bound (timeoutMs, at most 30 s) and degrades; the phase's
        # deadline is a backstop above it, so only a slot error fails the turn.
        deadline_s=DIO_TIMEOUT_MS[1] / 1000 + 5,
        required=True,
        applies=lambda ctx: ctx.settings.dio is not None,
    )


async def schedule(ctx: TurnContext) -> dict[str, Any]:
    """``schedule_dio`` of the front loop: the player's raw input of this turn (never the
    controller's text) submitted for this turn's identity. The seed's receipt JSON, also in
    ``trace["dio"]["scheduled"]``, and ``dio.accepted`` to the conversation's sockets (sent
    here for an outside DIO; our own sends it when it accepts, whichever door). A
    refusal is a :class:`DioError` (``not_wired``, ``no_input``, ``dio_duplicate``, the
    backend's own codes: nothing submitted); a timeout or another failure is raised as it
    is (maybe submitted: the loop does not try again)."""
    state = ctx.slot(DioState)
    if not state.offered or ctx.kind not in SCHEDULE_KINDS:
        raise DioError("not_wired", "DIO is not on for this turn")
    if not (ctx.user_input or "").strip():
        raise DioError("no_input", "this turn has no player input to submit")
    if state.receipt is not None:
        raise DioError("dio_duplicate", "this turn submitted its input already")
    assert state.backend is not None and state.identity is not None
    assert state.config is not None
    turn_id = str(ctx.turn.id)
    request = ScheduleRequest(state.identity, turn_id, ctx.user_input or "")
    try:
        async with asyncio.timeout(state.config.timeoutMs / 1000):
            receipt = await state.backend.schedule(request)
        _check_receipt(receipt, state.identity, turn_id)
    except DioError as exc:
        state.trace["scheduled"] = {"accepted": False, "code": exc.code}
        raise
    state.receipt = receipt.as_json()
    state.trace["scheduled"] = state.receipt
    if state.backend.announces:
        return dict(state.receipt)  # our DIO announced it, as for every door
    event = {"type": "dio.accepted", "turn_id": turn_id, **state.receipt}
    try:
        await hub.announce(str(ctx.conversation.pk), event)
    except Exception:  # the submission stands; only the sockets missed the news
        logger.warning("could not announce dio.accepted for turn %s", turn_id, exc_info=True)
    return dict(state.receipt)


def _check_receipt(receipt: Receipt, identity: Identity, turn_id: str) -> None:
    """The receipt names what was sent (the seed's derived ids), else
    ``dio_identity_mismatch``: a backend that accepted something else did not accept this."""
    expected = (dio_conversation_id(identity.conversation_id), request_id(turn_id))
    if not receipt.accepted or (receipt.dio_conversation_id, receipt.request_id) != expected:
        raise DioError("dio_identity_mismatch", "the receipt names another submission")


def offered(ctx: TurnContext) -> bool:
    """Whether the front loop offers ``schedule_dio`` this turn (DIO on, its backend made,
    a turn with the player's new input)."""
    return ctx.slot(DioState).offered and ctx.kind in SCHEDULE_KINDS


class DioPlugin(TurnPlugin):
    name = "dio"
    # Compact counts the Actor prompt: it must see the one with DIO's prompt in place.
    before = ("compact",)

    def __init__(self, backends: Backends = default_backends) -> None:
        self.prepare = make_phase(backends)  # type: ignore[misc]


PLUGIN = DioPlugin()
