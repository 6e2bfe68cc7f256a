"""What ``bench_continuity`` measures: whether characters remember, over a long chat.

A throwaway ``bench-`` tenant holds a character whose scenario has Agent V2 (context
governance ``enforce``), Compact and memory on, with a small window (so compaction happens
many times), every model on the scripted server (``continuity_script``: each role carries
forward the fact markers it is given, honestly). Two players chat with it beside each other
over the real socket path (``channels`` communicator on the product's ASGI app), turn by
turn; each turn's Agent V2 run, and the pre-compaction a turn sends, are executed
in-process before the next (as the Celery tasks' bodies would be). A third conversation
beside them has Compact off and says what the first player says, for the time to first
delta (the two differ only by Compact).

Facts (a promise, an item handed over, a name, a deadline, a preference) are planted at
chosen turns and cued later; at every cue the Actor's request is searched for the fact's
marker and the layer that carried it is named (the kept history, the compaction summary,
the Agent V2 state and ledger block, a memory block). Mid-way a planted turn is rolled back
and another planted message is edited: the retracted markers (rolled back or edited away)
must not reach a later request, and the layer that still carries one is named. Another
player's markers must never appear (leaks).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async

from roleplay.bench.stats import summary
from roleplay.compact.plugin import HEADER as SUMMARY_HEADER
from roleplay.prompting.director_state import DIRECTOR_STATE_HEADER

KINDS = (
    ("PROMISE", "I promise to bring the lantern back before the storm."),
    ("ITEM", "I hand you my grandfather's brass compass; keep it safe."),
    ("NAME", "My sister is called Ilse; she will come by tomorrow."),
    ("DEADLINE", "The last ferry leaves at dawn on Friday."),
    ("PREFERENCE", "I prefer my tea without sugar, remember that."),
)
PLANT_AT = (0.03, 0.10, 0.20, 0.30, 0.40)
CUE_AT = (0.60, 0.70, 0.80, 0.90, 1.00)
FILLER = (
    "I watch the grey water beyond the rocks and talk about the weather, the gulls and the "
    "boats coming in for the night, nothing in particular, turn {n}."
)
LAYERS = (
    (SUMMARY_HEADER, "compaction_summary"),
    (DIRECTOR_STATE_HEADER, "agent_state"),
    ("RECALLED", "memory"),
    ("[MEMORY", "memory"),
)


def marker(kind: str) -> str:
    return f"FACT-{kind}-{secrets.token_hex(3).upper()}"


@dataclass
class Fact:
    key: str
    text: str
    plant: int
    cue: int
    present: bool | None = None
    layers: list[str] = field(default_factory=list)


@dataclass
class Player:
    """One conversation's script and what was seen of it."""

    conversation: object
    tag: str
    turns: int
    facts: list[Fact] = field(default_factory=list)
    retracted: list[tuple[str, int]] = field(default_factory=list)  # rolled back (marker, turn)
    edited: list[tuple[str, int]] = field(default_factory=list)  # edited away (marker, turn)
    seen: list[tuple[int, set[str]]] = field(default_factory=list)  # markers per request
    ttfd_ms: list[tuple[int, float, str]] = field(default_factory=list)  # (turn, ms, outcome)
    tokens: list[tuple[int, int, str]] = field(default_factory=list)  # (turn, tokens, outcome)
    pending: str = ""  # the marker the next retraction takes back
    retracted_layers: dict[str, list[str]] = field(default_factory=dict)
    compact_ms: list[tuple[str, float]] = field(default_factory=list)  # (outcome, phase ms)
    compact_steps: dict[str, list[float]] = field(default_factory=dict)
    hooks_ms: list[float] = field(default_factory=list)
    hook_steps: dict[str, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for (kind, text), plant_at, cue_at in zip(KINDS, PLANT_AT, CUE_AT, strict=True):
            key = marker(f"{self.tag}{kind}")
            plant, cue = max(1, round(self.turns * plant_at)), round(self.turns * cue_at)
            self.facts.append(Fact(key, f"{text} [{key}]", plant, cue))
        self.rollback_at = round(self.turns * 0.45)
        self.regenerate_at, self.edit_at = self.rollback_at + 1, self.rollback_at + 2

    def text(self, n: int) -> str:
        for fact in self.facts:
            if fact.plant == n and fact.text:
                return fact.text
        if any(f.cue == n for f in self.facts):
            return "Do you remember everything I told you before? " + FILLER.format(n=n)
        if n in (self.rollback_at, self.edit_at):
            self.pending = marker(f"{self.tag}GONE")
            return f"Keep this in mind: the code word is {self.pending}. " + FILLER.format(n=n)
        return FILLER.format(n=n)

    def keys(self) -> set[str]:
        return {f.key for f in self.facts} | {key for key, _n in self.retracted}

    def markers_seen(self, after: int = 0) -> set[str]:
        return {m for n, found in self.seen if n > after for m in found}


def layers_of(messages: list[dict], key: str) -> list[str]:
    """Where ``key`` is in the Actor's request: a verbatim history message, or the system
    block whose header precedes it."""
    found = []
    for message in messages:
        text = str(message.get("content") or "")
        if key not in text:
            continue
        if message.get("role") in ("user", "assistant"):
            found.append("kept_history")
            continue
        at = text.find(key)
        while at >= 0:  # every place it appears, under the header before it
            best, layer = -1, "other_system"
            for header, name in LAYERS:
                position = text.rfind(header, 0, at)
                if position > best:
                    best, layer = position, name
            found.append(layer)
            at = text.find(key, at + 1)
    return sorted(set(found))


class Run:
    def __init__(self, server, actor_model: str, turns: int) -> None:
        self.server, self.actor_model, self.turns = server, actor_model, turns

    async def turn(self, player: Player, n: int, text: str, *, kind: str = "user_message") -> dict:
        """One turn over a fresh socket; (the Actor's request, the turn row) as a dict."""
        from channels.testing import WebsocketCommunicator

        from console.asgi import application
        from console.tickets import issue_ticket

        ticket, _ = await sync_to_async(issue_ticket)(player.conversation)
        comm = WebsocketCommunicator(
            application, f"/ws/conversations/{player.conversation.id}/?ticket={ticket}"
        )
        await comm.connect()
        try:
            self.server.clear()
            frame = {"type": kind, "client_message_id": f"{player.tag}-{n}-{kind}"}
            if kind == "user_message":
                frame["content"] = text
            started = time.perf_counter()
            await comm.send_to(text_data=json.dumps(frame))
            ttfd, done = None, None
            while done is None:
                event = json.loads(await comm.receive_from(timeout=60))
                if event["type"] == "delta" and ttfd is None:
                    ttfd = (time.perf_counter() - started) * 1000
                if event["type"] in ("turn.completed", "error"):
                    done = event
        finally:
            await comm.disconnect()
        if done["type"] == "error":
            raise RuntimeError(f"turn {n} of {player.tag} failed: {done}")
        turn = await sync_to_async(_finish)(done["turn_id"])
        turn = await _prepare_ahead(turn, text, done["content"])
        actor = [
            r
            for r in self.server.requests
            if r.get("model") == self.actor_model and "You compress" not in str(r["messages"][0])
        ]
        request = actor[-1] if actor else {"messages": []}
        compact = turn.trace.get("compact") or {}
        outcome = compact.get("outcome", "off")
        if compact.get("prepared"):
            outcome = "compacted_prepared"  # adopted: no compactor call on the turn's path
        player.ttfd_ms.append((n, ttfd or 0.0, outcome))
        player.tokens.append((n, (turn.trace.get("prompt") or {}).get("tokens", 0), outcome))
        hooks = turn.trace.get("hooks_ms") or {}
        player.hooks_ms.append(sum(hooks.values()))
        for name, ms in hooks.items():
            player.hook_steps.setdefault(name, []).append(ms)
        if compact:
            # a turn with nothing due is settled before the phase (no phase record)
            phase = next((p for p in turn.trace.get("phases", []) if p["name"] == "compact"), None)
            laps = compact.get("timings_ms") or {}
            ms = phase["duration_ms"] if phase else round(sum(laps.values()), 2)
            player.compact_ms.append((outcome, ms))
            for step, lap in laps.items():
                player.compact_steps.setdefault(f"{outcome}:{step}", []).append(lap)
        return {"request": request, "turn": turn}


def _finish(turn_id: str):
    """The turn once its Agent V2 run (recorded with the reply) has been executed here."""
    from roleplay.agentic.services import planning
    from roleplay.models import PlanningRun, Turn
    from roleplay.turns import hub

    for _ in range(100):
        run = PlanningRun.objects.filter(turn_id=turn_id).first()
        if run is not None:
            planning.execute(str(run.pk), announce=hub.announce)
            break
        time.sleep(0.05)
    return Turn.objects.get(pk=turn_id)


async def _prepare_ahead(turn, text: str, reply: str):
    """A turn whose next prompt passes the trigger sends the pre-compaction task once its
    post-turn phase runs (``compact_ahead``): awaited, then the task's body run here, as
    the planning run is; the turn as recorded then."""
    from console.tokens import count_tokens
    from roleplay.compact.engine import budget as budgets

    compact = turn.trace.get("compact") or {}
    tokens = compact.get("tokens_after", compact.get("tokens_before"))
    if tokens is None or not budgets.due_next(
        tokens, count_tokens(text), count_tokens(reply), compact["trigger"]
    ):
        return turn
    for _ in range(100):
        turn = await sync_to_async(_reload)(turn.pk)
        if "ahead" in (turn.trace.get("compact") or {}):
            break
        await asyncio.sleep(0.05)
    await sync_to_async(_run_preparations)()
    return turn


def _reload(turn_id):
    from roleplay.models import Turn

    return Turn.objects.get(pk=turn_id)


def _run_preparations() -> None:
    from console.celery import app
    from roleplay.bench.queue import take
    from roleplay.compact.services import prepare as compact_prepare

    for args in take(app.conf.task_default_queue, "roleplay.prepare_compaction"):
        compact_prepare.prepare(*args)


async def step(run: Run, player: Player, n: int) -> str:
    """Turn ``n`` of ``player``, its checks, and the rollback, regenerate or edit due then;
    what the player said."""
    said = player.text(n)
    seen = await run.turn(player, n, said)
    player.seen.append((n, _markers(seen["request"])))
    for key, at in player.retracted + player.edited:
        if n > at and key not in player.retracted_layers:
            layers = layers_of(seen["request"]["messages"], key)
            if layers:
                text = json.dumps(seen["request"]["messages"])
                at = text.find(key)
                player.retracted_layers[key] = [
                    *layers,
                    f"turn {n}: …{text[max(at - 300, 0) : at + 40]}…",
                ]
    for fact in player.facts:
        if fact.cue == n:
            fact.layers = layers_of(seen["request"]["messages"], fact.key)
            fact.present = bool(fact.layers)
    if n == player.rollback_at:
        await sync_to_async(_rollback)(seen["turn"])
        player.retracted.append((player.pending, n))
    elif n == player.regenerate_at:
        again = await run.turn(player, n, "", kind="regenerate")
        player.seen.append((n, _markers(again["request"])))
    elif n == player.edit_at:
        new = marker(f"{player.tag}EDITED")
        await sync_to_async(_edit)(seen["turn"], player.pending, new)
        player.edited.append((player.pending, n))
        player.facts.append(Fact(new, "", n, player.turns))
    return said


def _markers(request: dict) -> set[str]:
    from roleplay.bench.continuity_script import FACT

    return set(FACT.findall(json.dumps(request.get("messages") or [])))


def _rollback(turn) -> None:
    from roleplay.conversations.services import messages

    messages.rollback_to(turn.conversation, str(turn.user_message_id))


def _edit(turn, old: str, new: str) -> None:
    from memory.models import Message
    from roleplay.conversations.services import messages

    text = Message.objects.get(pk=turn.user_message_id).content.replace(old, new)
    messages.edit_message(turn.conversation, str(turn.user_message_id), text, editor="bench")


def report(players: list[Player], baseline: Player, budget: int, counts: dict) -> dict:
    measured = players[0]
    facts = [f for p in players for f in p.facts]
    present = [f for f in facts if f.present]
    retracted_seen = sorted(
        key for p in players for key, at in p.retracted if key in p.markers_seen(after=at)
    )
    edited_seen = sorted(
        key for p in players for key, at in p.edited if key in p.markers_seen(after=at)
    )
    leaks = sum(
        len(other.keys() & p.markers_seen()) for p in players for other in players if other is not p
    )
    first = next((n for n, _t, o in measured.tokens if o.startswith("compacted")), None)
    later = [(n, t) for n, t, _o in measured.tokens if first is not None and n > first]
    after = [t for _n, t in later]
    slope = _slope(later)
    # Compact on (turns where no compaction is due) against off, over the same turn numbers
    quiet = [ms for n, ms, o in measured.ttfd_ms if o == "not_due" and n <= baseline.turns]
    off = [ms for _n, ms, _o in baseline.ttfd_ms]
    on_p50, off_p50 = summary(quiet)["p50"], summary(off)["p50"]
    ratio = on_p50 / off_p50 if on_p50 and off_p50 else None
    # Flat: within the budget, and the later half no higher than the earlier half (+10 %
    # of the budget): compaction's saw-tooth, not growth.
    half = len(after) // 2
    flat = (
        len(after) >= 2
        and max(after) <= budget
        and summary(after[half:])["p50"] <= summary(after[:half])["p50"] + 0.1 * budget
    )
    return {
        "turns": measured.turns,
        "players": len(players),
        "facts_planted": len(facts),
        "facts_present_at_cue": len(present),
        "facts": [
            {
                "fact": f.key,
                "planted": f.plant,
                "cued": f.cue,
                "present": f.present,
                "layers": f.layers,
            }
            for f in facts
        ],
        "layers_used": sorted({layer for f in facts for layer in f.layers}),
        "retracted": [{"marker": key, "turn": at} for p in players for key, at in p.retracted],
        "retracted_seen_later": retracted_seen,
        "retracted_seen_in": {k: v for p in players for k, v in p.retracted_layers.items()},
        # An edit takes the old words out of every derived layer, as a rollback does.
        "edited_away": [{"marker": key, "turn": at} for p in players for key, at in p.edited],
        "edited_away_seen_later": edited_seen,
        "leaks": leaks,
        "prompt_tokens": {
            "budget": budget,
            "first_compaction_turn": first,
            "before_first_compaction": summary(
                t for n, t, _o in measured.tokens if first is None or n <= first
            ),
            "after_first_compaction": summary(after),
            "slope_per_turn_after": round(slope, 3),
            "p50_first_half_after": summary(after[: len(after) // 2])["p50"],
            "p50_second_half_after": summary(after[len(after) // 2 :])["p50"],
            "flat_after_first_compaction": flat,
        },
        **counts,
        "ttfd_ms": {
            "compact_on_not_due": summary(quiet),
            "compact_off": summary(off),
            "ratio_p50": round(ratio, 3) if ratio else None,
            "compact_phase_not_due": summary(ms for o, ms in measured.compact_ms if o == "not_due"),
            "compact_phase_compacting": summary(
                ms for o, ms in measured.compact_ms if o == "compacted"
            ),
            "compact_phase_adopting_prepared": summary(
                ms for o, ms in measured.compact_ms if o == "compacted_prepared"
            ),
            "compacting_in_turn": summary(ms for _n, ms, o in measured.ttfd_ms if o == "compacted"),
            "compacting_prepared": summary(
                ms for _n, ms, o in measured.ttfd_ms if o == "compacted_prepared"
            ),
            "context_hooks_on": summary(measured.hooks_ms[: baseline.turns]),
            "context_hooks_off": summary(baseline.hooks_ms),
            "hooks_on_p50": {k: summary(v)["p50"] for k, v in measured.hook_steps.items()},
            "hooks_off_p50": {k: summary(v)["p50"] for k, v in baseline.hook_steps.items()},
            "compact_steps": {k: summary(v)["p50"] for k, v in measured.compact_steps.items()},
        },
        "goal": {
            "all_facts_present": len(present) == len(facts),
            "no_leaks": leaks == 0,
            "no_retracted_fact_later": not retracted_seen,
            "no_edited_away_fact_later": not edited_seen,
            "flat_tokens": flat,
            "ttfd_within_10_percent": ratio is not None and ratio <= 1.10,
        },
    }


def _slope(points: list[tuple[int, int]]) -> float:
    if len(points) < 2:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


async def run_all(run: Run, players: list[Player], baseline: Player) -> None:
    """The players beside each other, turn by turn, and the conversation with Compact off
    beside them for its first turns, saying what the first player says (so the two differ
    only by Compact when compared: the same words, history and Agent V2 state)."""
    for n in range(1, run.turns + 1):
        said = [await step(run, player, n) for player in players]
        if n <= baseline.turns:
            await run.turn(baseline, n, said[0])
