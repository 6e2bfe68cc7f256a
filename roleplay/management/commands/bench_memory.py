"""``manage.py bench_memory --json [--dataset PATH] [--conversations N] [--lang en|zh]
[--synthetic hard|easy] [--scale N]``: how well and how fast recall finds what was said, on
conversations in the LoCoMo layout.

Without ``--dataset`` it generates a deterministic synthetic set: by default the hard one
(``memory.bench.hard``, in English or, ``--lang zh``, Chinese: 10 conversations of about 20
sessions, 200 questions, paraphrased, by relation, by date arithmetic, multi-hop over 2-4
sessions, among distractors and small talk), or ``--synthetic easy`` the first one
(``memory.bench.synthetic``). Each sample
becomes one player, one character and one conversation in a throwaway ``bench-`` tenant
(``speaker_a`` the user, ``speaker_b`` the assistant); its turns are stored with the message
store's ``save_message`` at the session's time and indexed with ``index_messages``, the
``memory.index_messages`` task's body (``memory.bench.ingest``; the two tables are then
analysed, as autovacuum would soon, see there). Every question with
evidence is asked of the product's recall (k = 1, 5, 10, 20) and of the lexical-only,
vector-only and recency baselines (``memory.bench.evaluate``). Commit to searchable is
measured in-process (the indexing time of each stored turn) and, for ``--searchable-turns``
turns, through the product's path: ``roleplay.turns.records.index_on_commit`` enqueues the
task on commit and a real Celery worker started here on a private queue indexes it
(``memory.bench.searchable``). Figures are per category with the baselines beside hybrid,
latency per stage, and a check that hybrid beats the best single retriever everywhere
(``memory.bench.report``). ``--scale N`` then crowds the index in steps and times recall at
each (the cost curve, ``memory.bench.scale``), then reports the sizes on disk. The tenant
is deleted at the end.

The data set's code and figures live in ``memory.bench``; this command lives here because
creating players' conversations and characters needs ``roleplay``, which ``memory`` never
imports.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from console.bootstrap import migrate_quietly
from console.management.commands.serve import SERVE_CONCURRENCY
from console.models import Player, Tenant
from console.tokens import count_tokens
from memory.bench import (
    evaluate,
    hard,
    ingest,
    locomo,
    metrics,
    report,
    scale,
    searchable,
    synthetic,
    throughput,
)
from memory.bench.ingest import Owner
from memory.bench.stats import summary
from memory.bench.worker import celery_worker
from roleplay.bench.queue import new_queue_name, private_queue
from roleplay.bench.tenant import PREFIX
from roleplay.models import Character, Conversation
from roleplay.turns.records import index_on_commit

DEFAULT_CONVERSATIONS = 10
MAX_CONVERSATIONS = 1000
MAX_SCALE = 100_000


class Command(BaseCommand):
    help = "Benchmark recall on LoCoMo-layout conversations (see the module docstring)."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument("--dataset", help="a LoCoMo-layout JSON file (default: synthetic)")
        parser.add_argument(
            "--conversations", type=int, help="samples to use (synthetic: to generate; 10)"
        )
        parser.add_argument(
            "--scale", type=int, default=0, help="filler messages for the owner (x20 others)"
        )
        parser.add_argument(
            "--searchable-turns", type=int, default=20, help="turns through a Celery worker"
        )
        parser.add_argument(
            "--worker-turns",
            type=int,
            default=500,
            help="turns queued at once for a Celery worker like make run's (its messages/s)",
        )
        parser.add_argument("--misses", type=int, default=2, help="misses shown per category")
        parser.add_argument("--seed", type=int, default=synthetic.DEFAULT_SEED)
        parser.add_argument(
            "--synthetic",
            choices=("hard", "easy"),
            default="hard",
            help="the generated set: hard (paraphrases, relations, dates) or the first, easy one",
        )
        parser.add_argument(
            "--lang", choices=sorted(hard.LANGUAGES), default="en", help="the hard set's language"
        )

    def handle(self, *args, **opts):
        conversations = opts["conversations"]
        if conversations is not None and not 1 <= conversations <= MAX_CONVERSATIONS:
            raise CommandError(f"--conversations 1..{MAX_CONVERSATIONS}")
        if (
            not 0 <= opts["scale"] <= MAX_SCALE
            or min(opts["searchable_turns"], opts["worker_turns"]) < 0
        ):
            raise CommandError(
                f"--scale 0..{MAX_SCALE}, --searchable-turns and --worker-turns >= 0"
            )
        samples, source = _load(opts["dataset"], conversations, opts)
        if not samples:
            raise CommandError("the data set has no samples")
        migrate_quietly()
        tenant = Tenant.objects.create(name=f"{PREFIX}memory-{uuid.uuid4().hex[:8]}")
        try:
            data = self._run(tenant, samples, opts)
        finally:
            if opts["scale"]:
                scale.clear(tenant)
            Tenant.objects.filter(pk=tenant.pk, name__startswith=PREFIX).delete()
        data = {"dataset": {"source": source, **_dataset(samples)}, **data}
        data["check"] = report.check(data)
        data["goals"] = report.goals(data)
        data["meets_goal"] = all(goal["meets_goal"] for goal in data["goals"].values())
        out = (
            json.dumps(data, indent=2, ensure_ascii=False) if opts["json"] else report.render(data)
        )
        self.stdout.write(out)

    def _run(self, tenant, samples: list[locomo.Sample], opts) -> dict:
        owners = [_owner(tenant, str(n), sample) for n, sample in enumerate(samples)]
        began = time.perf_counter()
        done = [ingest.ingest(sample, owner) for sample, owner in zip(samples, owners, strict=True)]
        ingest_s = time.perf_counter() - began
        ingest.analyze()
        results = evaluate.evaluate(done, count_tokens=count_tokens, misses=opts["misses"])
        messages = sum(len(d.order) for d in done)
        data = {
            "ks": list(metrics.KS),
            "hybrid": results["hybrid"],
            "pack": results["pack"],
            "baselines": results["baselines"],
            "latency_ms": {
                "recall": report.latency(results["latency_ms"]),
                "stages": results["stages_ms"],
            },
            "ingest": {
                "messages": messages,
                "seconds": round(ingest_s, 2),
                "messages_per_s": round(messages / ingest_s, 1) if ingest_s else None,
                "indexed_per_s": _per_s(messages, sum(v for d in done for v in d.index_ms)),
                "save_ms_per_turn": summary(v for d in done for v in d.save_ms),
                "index_ms_per_turn": summary(v for d in done for v in d.index_ms),
                "worker": _worker_ingest(tenant, samples, opts["worker_turns"]),
            },
            "commit_to_searchable_ms": {
                "in_process": summary(v for d in done for v in d.index_ms),
                "celery": _through_celery(tenant, opts["searchable_turns"]),
            },
            "top_score_mean": results["top_score_mean"],
            "scale": None,
            "misses_at_10": results["misses_at_10"],
        }
        if opts["scale"]:
            data["scale"] = _scale(tenant, done[0], opts["scale"])
        return data


def _load(path: str | None, conversations: int | None, opts: dict):
    if path is None:
        count, seed = conversations or DEFAULT_CONVERSATIONS, opts["seed"]
        if opts["synthetic"] == "easy":
            return locomo.parse(synthetic.generate(count, seed=seed)), f"synthetic (seed {seed})"
        raw = hard.generate(count, seed=seed, lang=opts["lang"])
        return locomo.parse(raw), f"synthetic hard, {opts['lang']} (seed {seed})"
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        return locomo.parse(raw, conversations), str(path)
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot read the data set {path}: {exc}") from exc


def _dataset(samples: list[locomo.Sample]) -> dict:
    questions = [q for s in samples for q in s.questions]
    categories: dict[str, int] = {}
    for q in questions:
        categories[q.category] = categories.get(q.category, 0) + 1
    return {
        "conversations": len(samples),
        "sessions": sum(len({t.session for t in s.turns}) for s in samples),
        "messages": sum(len(s.turns) for s in samples),
        "questions": len(questions),
        "questions_with_evidence": sum(1 for q in questions if q.evidence),
        "evidence_turns": sum(len(q.evidence) for q in questions),
        "unknown_evidence_ids": sum(q.unknown_evidence for q in questions),
        "categories": dict(sorted(categories.items())),
    }


def _per_s(count: int, ms: float) -> float | None:
    return round(count / (ms / 1000), 1) if ms else None


def _owner(tenant, name: str, sample: locomo.Sample, *, player=None) -> Owner:
    """A new conversation of a new player ``name`` (or of ``player``) with a character
    named after ``speaker_b``."""
    player = player or Player.objects.create(
        tenant=tenant, external_id=f"bench-memory-{name}", display_name=sample.speaker_a
    )
    character = Character.objects.create(tenant=tenant, name=sample.speaker_b)
    conversation = Conversation.objects.create(tenant=tenant, player=player, character=character)
    return Owner(tenant, player, str(character.pk), conversation.pk)


def _through_celery(tenant, turns: int) -> dict | None:
    """Commit to searchable through ``index_on_commit`` and a Celery worker (None when
    ``turns`` is 0; the error when the worker or the queue cannot be had)."""
    if not turns:
        return None
    owner = _owner(tenant, "probe", locomo.Sample("probe", "Probe", "Keeper"))

    def enqueue(message_ids: list) -> None:
        user, assistant = message_ids
        index_on_commit(owner.conversation_id, [str(user), str(assistant)])

    try:
        with private_queue(task=None) as queue, celery_worker(queue["queue"]):
            figures = searchable.measure(owner, turns, enqueue)
        return {**figures, "tasks_left_in_queue": queue["purged"]}
    except Exception as exc:  # no broker, no worker: the in-process figure stands alone
        return {"error": f"{type(exc).__name__}: {exc}"}


def _worker_ingest(tenant, samples: list[locomo.Sample], turns: int) -> dict | None:
    """Messages a second that a Celery worker configured as ``make run``'s indexes from a
    backlog of ``turns`` turns and from an import of as many messages
    (``memory.bench.throughput``; None when 0, the error when no worker or queue can be
    had)."""
    if not turns:
        return None
    owners = tuple(
        _owner(tenant, name, locomo.Sample(name, "Reader", "Keeper"))
        for name in ("throughput", "imported")
    )
    texts = [turn.text for sample in samples for turn in sample.turns]

    def enqueue(owner: Owner, message_ids: list) -> None:
        index_on_commit(owner.conversation_id, [str(i) for i in message_ids])

    try:
        with private_queue(task=None) as queue:
            figures = throughput.measure(
                owners, texts, turns, enqueue=enqueue, queue=queue["queue"],
                worker=lambda: celery_worker(new_queue_name(), concurrency=SERVE_CONCURRENCY),
            )  # fmt: skip
        return {**figures, "concurrency": SERVE_CONCURRENCY, "tasks_left_in_queue": queue["purged"]}
    except Exception as exc:  # no broker, no worker: the in-process figure stands alone
        return {"error": f"{type(exc).__name__}: {exc}"}


def _scale(tenant, measured: ingest.Ingested, count: int) -> dict:
    player = measured.owner.player
    extra = _owner(tenant, "scale", measured.sample, player=player)
    others = [_owner(tenant, f"other-{n}", measured.sample) for n in range(scale.OTHER_PLAYERS)]
    return scale.run(measured, extra, others, count)
