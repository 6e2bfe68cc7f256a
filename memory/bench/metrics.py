"""Retrieval figures of one question and their means (pure).

A result list is the retrieved items best first, each given as the dia ids of the messages
it carries (a message hit widened with its neighbours carries three): an evidence turn is
*found* when any of the first ``k`` items carries it, so a neighbour counts.

- evidence recall@k: the share of the question's evidence turns found in the top ``k``;
- all-evidence@k: 1 when every evidence turn is found in the top ``k``, else 0;
- reciprocal rank: 1 / the rank of the first item that carries any evidence turn (0 when
  none does);
- the pack: the top items taken while their text fits a token budget (the first always),
  and the share of evidence turns it carries.

Means are per question (each question weighs the same, whatever its number of evidence
turns), overall and per category.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

KS = (1, 5, 10, 20)
ALL_EVIDENCE_K = 10
PACK_TOKENS = 1500

Items = Sequence[Collection[str]]


def found(evidence: Collection[str], items: Items, k: int) -> set[str]:
    wanted = set(evidence)
    return {dia for item in items[:k] for dia in item if dia in wanted}


def recall_at(evidence: Collection[str], items: Items, k: int) -> float:
    return len(found(evidence, items, k)) / len(set(evidence)) if evidence else 0.0


def all_found(evidence: Collection[str], items: Items, k: int) -> bool:
    return bool(evidence) and found(evidence, items, k) == set(evidence)


def reciprocal_rank(evidence: Collection[str], items: Items) -> float:
    wanted = set(evidence)
    for rank, item in enumerate(items, start=1):
        if wanted.intersection(item):
            return 1.0 / rank
    return 0.0


def score(evidence: Collection[str], by_k: Mapping[int, Items]) -> dict:
    """recall@k for each list of ``by_k`` (the list retrieved with that ``k``), all-evidence
    at :data:`ALL_EVIDENCE_K` and the reciprocal rank in the longest list."""
    longest = by_k[max(by_k)]
    all_k = by_k.get(ALL_EVIDENCE_K, longest)
    return {
        "recall_at": {k: recall_at(evidence, items, k) for k, items in sorted(by_k.items())},
        f"all_evidence_at_{ALL_EVIDENCE_K}": float(all_found(evidence, all_k, ALL_EVIDENCE_K)),
        "mrr": reciprocal_rank(evidence, longest),
    }


def prefixes(items: Items, ks: Iterable[int] = KS) -> dict[int, Items]:
    """One ranked list seen at each ``k`` (for a system asked once with the largest k)."""
    return {k: items[:k] for k in ks}


def score_set(evidence: Collection[str], kept: Collection[str]) -> dict:
    """A system that keeps a set of turns, unranked (the recency window)."""
    wanted, kept = set(evidence), set(kept)
    return {
        "recall": len(wanted & kept) / len(wanted) if wanted else 0.0,
        f"all_evidence_at_{ALL_EVIDENCE_K}": float(bool(wanted) and wanted <= kept),
    }


def pack(
    items: Sequence[tuple[str, Collection[str]]],
    count_tokens: Callable[[str], int],
    budget: int = PACK_TOKENS,
) -> tuple[set[str], int, int]:
    """The dia ids carried by the top ``(text, dia ids)`` items that fit ``budget`` tokens
    (the first always goes in), the tokens used and the items taken."""
    carried: set[str] = set()
    used = taken = 0
    for text, ids in items:
        tokens = count_tokens(text)
        if taken and used + tokens > budget:
            break
        carried.update(ids)
        used += tokens
        taken += 1
    return carried, used, taken


def widen(ranked: Sequence[str], order: Sequence[str], *, neighbours: int, k: int) -> list:
    """Message hits (best first) as the product widens them: each with ``neighbours`` before
    and after in the conversation's ``order``; a hit inside a better hit's range is dropped.
    Unknown ids are skipped. At most ``k`` items."""
    position = {message: index for index, message in enumerate(order)}
    covered: set[str] = set()
    items: list[list[str]] = []
    for hit in ranked:
        if len(items) == k:
            break
        if hit in covered or hit not in position:
            continue
        index = position[hit]
        window = list(order[max(0, index - neighbours) : index + neighbours + 1])
        covered.update(window)
        items.append(window)
    return items


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _average(rows: list[dict]) -> dict:
    """The per-question means of a list of :func:`score` (or :func:`score_set`) results,
    nested dicts included."""
    out: dict = {}
    for key, first in rows[0].items():
        if isinstance(first, dict):
            out[key] = _average([row[key] for row in rows])
        else:
            out[key] = _mean([row[key] for row in rows])
    return out


def summarise(rows: Sequence[tuple[str, dict]]) -> dict:
    """``{overall: {questions, ...means}, by_category: {name: {questions, ...means}}}`` of
    ``(category, figures)`` rows."""
    if not rows:
        return {"overall": {"questions": 0}, "by_category": {}}
    groups: dict[str, list[dict]] = {}
    for category, figures in rows:
        groups.setdefault(category, []).append(figures)
    return {
        "overall": {"questions": len(rows), **_average([figures for _c, figures in rows])},
        "by_category": {
            name: {"questions": len(group), **_average(group)}
            for name, group in sorted(groups.items())
        },
    }
