"""Every question with evidence, asked of the product's recall and of the baselines.

The product (``hybrid``) is ``memory.recall.search.recall`` for the sample's player, once
for each ``k`` of :data:`metrics.KS` (each call timed), and once with the largest ``k`` it
allows for the token pack (the top items up to :data:`metrics.PACK_TOKENS` tokens of their
text, counted with ``console.tokens``). The baselines (:mod:`baselines`) rank once and are
read at each ``k``. Questions without evidence are asked once at k=10, for the score of their
best item (what an abstention threshold would look at). Misses at k=10 are kept, a few per
category, with the rank the lexical and the vector side gave the missed turns.

Latency per stage (embed, lexical, vector, fuse, rerank): recall's own figures when its
result carries them (``timings_ms``: ``{stage: ms}``), else the bench's timing of the same
public functions it calls for the baselines (the query's embedding, the lexical side's
ranking, the exact vector search); a stage with neither is reported absent (None).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from memory.bench import baselines, metrics
from memory.bench.ingest import Ingested
from memory.bench.locomo import Question
from memory.bench.stats import summary
from memory.recall.search import MAX_K, NEIGHBOURS, RecallQuery, recall

MISS_K = 10
STAGES = ("embed", "lexical", "vector", "fuse", "rerank")
# A recall result may carry its own per-stage timings, ``{stage: ms}``, under this key.
STAGE_KEY = "timings_ms"
WARMUP_CALLS = 3
Rows = list[tuple[str, dict]]


@dataclass
class _Run:
    count_tokens: Callable[[str], int]
    misses: int
    rows: dict[str, Rows] = field(
        default_factory=lambda: {name: [] for name in ("hybrid", "lexical", "vector")}
    )
    recency: Rows = field(default_factory=list)
    pack: Rows = field(default_factory=list)
    latency: dict[int, list[float]] = field(default_factory=dict)
    stages: dict[str, list[float]] = field(default_factory=dict)  # timed by the bench
    recall_stages: dict[str, list[float]] = field(default_factory=dict)  # told by recall
    top_scores: dict[str, list[float]] = field(
        default_factory=lambda: {"answerable": [], "unanswerable": []}
    )
    kept_misses: dict[str, list[dict]] = field(default_factory=dict)

    def ask(self, done: Ingested, question: str, k: int, *, timed: bool = True) -> list[dict]:
        started = time.perf_counter()
        query = RecallQuery(query=question, k=k)
        found = recall(done.owner.tenant, done.owner.player, query)
        if timed:
            self.latency.setdefault(k, []).append((time.perf_counter() - started) * 1000)
            for stage, ms in (found.get(STAGE_KEY) or {}).items():
                self.recall_stages.setdefault(stage, []).append(float(ms))
        return found["items"]

    def question(self, done: Ingested, q: Question, recent: set[str]) -> None:
        if not q.evidence:
            items = self.ask(done, q.question, MISS_K)
            self.top_scores["unanswerable"].append(items[0]["score"] if items else 0.0)
            return
        raw = {k: self.ask(done, q.question, k) for k in metrics.KS}
        hybrid = {k: done.dia_items(items) for k, items in raw.items()}
        self.rows["hybrid"].append((q.category, metrics.score(q.evidence, hybrid)))
        self.top_scores["answerable"].append(raw[1][0]["score"] if raw[1] else 0.0)
        self._pack(done, q)
        ranked = self._sides(done, q.question)
        for name, ids in ranked.items():
            widened = metrics.widen(ids, done.order, neighbours=NEIGHBOURS, k=max(metrics.KS))
            items = [[done.dia_of[m] for m in item] for item in widened]
            figures = metrics.score(q.evidence, metrics.prefixes(items))
            self.rows[name].append((q.category, figures))
        self.recency.append((q.category, metrics.score_set(q.evidence, recent)))
        if self.rows["hybrid"][-1][1]["recall_at"][MISS_K] < 1.0:
            kept = self.kept_misses.setdefault(q.category, [])
            if len(kept) < self.misses:
                kept.append(_miss(done, q, hybrid[MISS_K], raw[MISS_K], ranked))

    def _sides(self, done: Ingested, question: str) -> dict[str, list[str]]:
        """The lexical and vector baselines' rankings, each stage timed (embed, lexical,
        vector) as the bench calls them, apart from recall."""
        began = time.perf_counter()
        vec = baselines.embed(question)
        embedded = time.perf_counter()
        lexical = baselines.lexical(done.owner, question)
        lexed = time.perf_counter()
        vector = baselines.vector(done.owner, question, embedding=vec)
        ended = time.perf_counter()
        for stage, ms in (
            ("embed", embedded - began), ("lexical", lexed - embedded), ("vector", ended - lexed)
        ):  # fmt: skip
            self.stages.setdefault(stage, []).append(ms * 1000)
        return {"lexical": lexical, "vector": vector}

    def _pack(self, done: Ingested, q: Question) -> None:
        items = self.ask(done, q.question, MAX_K)
        pairs = list(zip([item["text"] for item in items], done.dia_items(items), strict=True))
        carried, tokens, taken = metrics.pack(pairs, self.count_tokens)
        share = metrics.score_set(q.evidence, carried)["recall"]
        self.pack.append((q.category, {"recall": share, "tokens": tokens, "items": taken}))


def evaluate(
    samples: list[Ingested], *, count_tokens: Callable[[str], int], misses: int = 2
) -> dict:
    run = _Run(count_tokens, misses)
    if samples and samples[0].sample.questions:  # warm the embedder and the connection
        for _ in range(WARMUP_CALLS):
            run.ask(samples[0], samples[0].sample.questions[0].question, 10, timed=False)
    for done in samples:
        recent = {done.dia_of[m] for m in baselines.recency(done.order)}
        for q in done.sample.questions:
            run.question(done, q, recent)
    return {
        "hybrid": metrics.summarise(run.rows["hybrid"]),
        "pack": {"budget_tokens": metrics.PACK_TOKENS, **metrics.summarise(run.pack)},
        "baselines": {
            "lexical": metrics.summarise(run.rows["lexical"]),
            "vector": metrics.summarise(run.rows["vector"]),
            "recency": {"window_messages": baselines.RECENT, **metrics.summarise(run.recency)},
        },
        "latency_ms": run.latency,
        "stages_ms": _stages(run),
        "top_score_mean": {
            name: round(sum(values) / len(values), 4) if values else None
            for name, values in run.top_scores.items()
        },
        "misses_at_10": run.kept_misses,
    }


def _stages(run: _Run) -> dict:
    """Per stage (:data:`STAGES`): the timings recall itself reports under
    :data:`STAGE_KEY` when it does, else those the bench took of the same public functions
    (embed, lexical, vector); a stage neither has is None (absent)."""
    told = bool(run.recall_stages)
    source = run.recall_stages if told else run.stages
    return {
        "measured_by": "recall" if told else "bench",
        **{stage: summary(source[stage]) if source.get(stage) else None for stage in STAGES},
    }


def _rank_of(ranked: list[str], message_ids: set[str]) -> int | None:
    return next((rank for rank, m in enumerate(ranked, start=1) if m in message_ids), None)


def _miss(done: Ingested, q: Question, items, raw: list[dict], ranked: dict) -> dict:
    """A question whose evidence the top 10 missed: the missed turns, the best hit, and the
    rank each side gave the missed turns (None: outside its candidate pool)."""
    got = metrics.found(q.evidence, items, MISS_K)
    missing = [d for d in q.evidence if d not in got]
    ids = {done.message_of[d] for d in missing}
    top = done.dia_of.get(raw[0]["id"], "?") if raw else None
    return {
        "question": q.question,
        "answer": q.answer,
        "missing": [f"{d}: {done.text_of(d)}" for d in missing],
        "found": sorted(got),
        "top_hit": f"{top}: {done.text_of(top)}" if top else None,
        "top_score": raw[0]["score"] if raw else None,
        "lexical_rank": _rank_of(ranked["lexical"], ids),
        "vector_rank": _rank_of(ranked["vector"], ids),
    }
