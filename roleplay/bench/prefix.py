"""What ``bench_prefix`` measures: how much of each Actor request a model server can reuse
from the one before it (its prompt cache skips only the part identical from the start).

A throwaway ``bench-`` tenant holds one character and scenario per *arm*: each capability
switched on alone (the worldbook with a bound 5,000-entry book, memory at its defaults,
Agent V2, Story, Compact), all of them together, and none. Every arm plays the same
scripted conversation over the real socket path twice, once with the shipped default
preset (the cache-aware layout) and once with the same preset without its ``turnContext``
marker (the classic layout); every model is on the scripted server (Agent V2's roles,
Story's JSON calls and the compactor answered as ``bench_continuity`` and
``bench_story`` answer them), Agent V2's run, a pre-compaction and the memory pack's
refresh are executed in-process after each turn, as their Celery tasks would. The window is
3,072 tokens and Compact's trigger 0.5, so the Compact arms compact within a dozen turns.

For each pair of consecutive turns the Actor requests the server received are compared:
the shared prefix (whole equal messages, then the common start of the first that differs)
in cl100k tokens (``console.tokens``), as a share of the earlier request (the figure the
goal is set on: p50 ≥ 90 %, p10 ≥ 70 % with the default layout), and as a share of the
earlier request's stable prefix as the assembly labelled it (``trace.prompt``): 100 %
means the next request started with all of it. Beside them, the work the share stands for:
the tokens of each later request past the shared prefix (``new_tokens``, their sum over the
run ``new_tokens_sum``), what a server must process anew. A share can rise while this does
not fall (text kept in the prompt only to be shared), so both are printed.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async

from console.tokens import count_messages
from roleplay.bench.stats import summary

ARMS = ("none", "worldbook", "memory", "agentic", "story", "compact", "all")
LAYOUTS = ("cache_aware", "classic")
CONTEXT_LIMIT, MAX_OUTPUT, TRIGGER = 3072, 256, 0.5
# Background work a turn queues that its next turn reads, run here after each turn as a
# worker would: the memory pack's refresh.
BACKGROUND = "memory.refresh_pack"
ACTOR_MODEL = "scripted-model"
GOAL = {"share_p50": 0.90, "share_p10": 0.70}
STORY_SCHEMAS = "story_"  # the names of Story's JSON schemas (``story_plan``...)


def route(request: dict):
    """Story's JSON-schema calls as ``bench_story`` answers them; every other role (Agent
    V2's, the compactor, whose summary is a JSON-schema call too, the Actor) as
    ``bench_continuity`` does."""
    from roleplay.bench import continuity_script, story_models

    schema = ((request.get("response_format") or {}).get("json_schema") or {}).get("name")
    if str(schema or "").startswith(STORY_SCHEMAS):
        return story_models.route(request)
    return continuity_script.route(request)


def shared_tokens(earlier: list[dict], later: list[dict]) -> int:
    """Tokens of the prefix ``later`` shares with ``earlier``: whole equal messages, then
    the common start of the first message that differs (same role and name)."""
    shared = 0
    for a, b in zip(earlier, later, strict=False):
        if a == b:
            shared += count_messages([a]) - count_messages([])
            continue
        if a.get("role") == b.get("role") and a.get("name") == b.get("name"):
            x, y = str(a.get("content") or ""), str(b.get("content") or "")
            common = next((i for i, (c, d) in enumerate(zip(x, y, strict=False)) if c != d), None)
            cut = x[: min(len(x), len(y)) if common is None else common]
            shared += count_messages([{**a, "content": cut}]) - count_messages([])
        break
    return shared


@dataclass
class Arm:
    name: str
    layout: str
    player: object
    agentic: bool = False
    requests: list[dict] = field(default_factory=list)
    stable: list[int] = field(default_factory=list)  # the stable prefix's tokens, per turn
    dropped: list[int] = field(default_factory=list)
    compacted: list[bool] = field(default_factory=list)

    def pairs(self) -> list[dict]:
        out = []
        for n in range(1, len(self.requests)):
            earlier, later = self.requests[n - 1], self.requests[n]
            shared = shared_tokens(earlier, later)
            total = count_messages(earlier)
            stable = self.stable[n - 1]
            out.append(
                {
                    "share": shared / total if total else 0.0,
                    # what the server processes anew: the later request past the shared part
                    "new": count_messages(later) - shared,
                    "of_stable": min(shared / stable, 1.0) if stable else 0.0,
                    "tokens": total,
                    "compaction": self.compacted[n],
                    "trimmed": self.dropped[n] != self.dropped[n - 1],
                }
            )
        return out


def report(arms: list[Arm], turns: int) -> dict:
    data: dict = {"turns": turns, "goal": GOAL, "arms": {}}
    for arm in arms:
        pairs = arm.pairs()
        shares = [p["share"] for p in pairs]
        of_stable = [p["of_stable"] for p in pairs]
        figures = {
            "share_p50": round(_quantile(shares, 0.5), 4),
            "share_p10": round(_quantile(shares, 0.1), 4),
            "of_stable_p50": round(_quantile(of_stable, 0.5), 4),
            "of_stable_min": round(min(of_stable, default=0.0), 4),
            "prompt_tokens": summary([p["tokens"] for p in pairs]),
            "new_tokens": summary([p["new"] for p in pairs]),
            "new_tokens_sum": sum(p["new"] for p in pairs),
            "pairs": len(pairs),
            "pairs_across_a_compaction": sum(1 for p in pairs if p["compaction"]),
            "pairs_across_history_trimming": sum(1 for p in pairs if p["trimmed"]),
            "shares": [round(s, 3) for s in shares],  # each pair's, in turn order
        }
        data["arms"].setdefault(arm.name, {})[arm.layout] = figures
    default = data["arms"].get("all", {}).get("cache_aware")
    if default is not None:
        data["goal_met_all_on"] = (
            default["share_p50"] >= GOAL["share_p50"] and default["share_p10"] >= GOAL["share_p10"]
        )
    return data


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


async def play(server, arm: Arm, turns: int, queue: str) -> None:
    """``turns`` turns of ``arm``'s conversation; each Actor request and its trace kept."""
    for n in range(1, turns + 1):
        turn = await _turn(server, arm, n, arm.player.text(n))
        await sync_to_async(_background)(queue)
        request = _actor_request(server.requests, ACTOR_MODEL)
        prompt = turn.trace.get("prompt") or {}
        compact = turn.trace.get("compact") or {}
        arm.requests.append(request)
        arm.stable.append(int(prompt.get("stable_prefix_tokens", 0)))
        arm.dropped.append(int(prompt.get("dropped_history", 0)))
        # Either rewrites the history the prompt sends (the summary and the kept messages).
        arm.compacted.append(compact.get("outcome") in ("compacted", "dropped_history"))


async def _turn(server, arm: Arm, n: int, text: str):
    """One turn over a fresh socket (as ``bench_continuity`` plays it); the turn row once
    its Agent V2 run and any pre-compaction it sent were executed here."""
    from channels.testing import WebsocketCommunicator

    from console.asgi import application
    from console.tickets import issue_ticket
    from roleplay.bench import continuity

    conversation = arm.player.conversation
    ticket, _ = await sync_to_async(issue_ticket)(conversation)
    comm = WebsocketCommunicator(
        application, f"/ws/conversations/{conversation.id}/?ticket={ticket}"
    )
    await comm.connect()
    try:
        server.clear()
        frame = {"type": "user_message", "client_message_id": f"{arm.player.tag}-{n}"}
        await comm.send_to(text_data=json.dumps({**frame, "content": text}))
        done = None
        while done is None:
            event = json.loads(await comm.receive_from(timeout=60))
            if event["type"] in ("turn.completed", "error"):
                done = event
    finally:
        await comm.disconnect()
    if done["type"] == "error":
        raise RuntimeError(f"turn {n} of {arm.name}/{arm.layout} failed: {done}")
    finish = continuity._finish if arm.agentic else continuity._reload
    turn = await sync_to_async(finish)(done["turn_id"])
    return await continuity._prepare_ahead(turn, text, done["content"])


def _actor_request(requests: list[dict], model: str) -> list[dict]:
    """The turn's Actor request: the last of the Actor's model that is neither one of
    Story's JSON calls nor the compactor's."""
    from roleplay.bench.continuity_script import COMPACTOR_MARK

    actor = [
        r
        for r in requests
        if r.get("model") == model
        and not r.get("response_format")
        and COMPACTOR_MARK not in str((r.get("messages") or [{}])[0].get("content"))
    ]
    return list(actor[-1]["messages"]) if actor else []


def _background(queue: str) -> None:
    from memory import tasks
    from roleplay.bench.queue import take

    for args in take(queue, BACKGROUND):
        tasks.refresh_pack(*args)


def run_layouts(
    server, arms: dict[str, dict[str, Arm]], turns: int, set_layout, queue: str
) -> None:
    """Every arm with one layout (``set_layout`` switches the Actor's preset), then every
    arm with the other; ``queue``: the private queue the turns' background work goes to."""
    for layout in LAYOUTS:
        set_layout(layout)
        for by_layout in arms.values():
            asyncio.run(play(server, by_layout[layout], turns, queue))
