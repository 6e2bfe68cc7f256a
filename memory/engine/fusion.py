"""Fusing ranked lists (pure).

Recall ranks its candidates several ways: the whole question's hybrid score (words and
meaning blended, ``engine.recall.fuse``) and, for a question asking about two things at
once ("X and Y", ``engine.decompose``) or about a person by relation (``engine.entities``),
each part's own words. A part's turns rarely rank high on the whole question (its words are
half the question's), so the lists are merged by reciprocal rank (:func:`rrf`,
:func:`merge`): each list places its best candidates near the top whatever the scale of its
scores, while the blend keeps the order among the rest.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

RRF_K = 60  # the usual constant: a rank's weight 1 / (RRF_K + rank)
# Merging a question's parts into its own ranking: a smaller constant keeps the question's
# own order (its first hits stay first) and lands each part's best hit near the top ten.
MERGE_K = 10


def rrf(
    rankings: Sequence[Sequence[Hashable]],
    weights: Sequence[float] | None = None,
    k: int = RRF_K,
) -> dict[Hashable, float]:
    """Each key's reciprocal-rank score over ``rankings`` (best first each), a list
    weighing ``weights[i]`` (1 each by default)."""
    weights = weights if weights is not None else [1.0] * len(rankings)
    scores: dict[Hashable, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return scores


def merge(
    primary: Sequence[tuple[Hashable, float]],
    parts: Sequence[Sequence[Hashable]],
    part_weight: float = 0.5,
    k: int = MERGE_K,
) -> list[tuple[Hashable, float]]:
    """``primary`` (``(key, score)`` best first) merged by reciprocal rank with the parts'
    rankings, which together weigh ``part_weight`` of the primary; among equals a key
    keeps its primary order. With no parts, ``primary`` as it is."""
    if not parts:
        return list(primary)
    each = part_weight / len(parts)
    fused = rrf([[key for key, _ in primary], *parts], [1.0, *[each] * len(parts)], k)
    first = {key: n for n, (key, _) in enumerate(primary)}
    order = sorted(fused, key=lambda key: (-fused[key], first.get(key, len(first))))
    return [(key, fused[key]) for key in order]


def keep_firsts(
    ranked: Sequence[tuple[Hashable, float]],
    parts: Sequence[Sequence[Hashable]],
    k: int,
    per_part: int = 1,
) -> list[tuple[Hashable, float]]:
    """``ranked`` (``(key, value)`` best first, as :func:`merge` gives it) with each part's
    first ``per_part`` keys within the first ``k``: a question about several things gets
    its evidence for each. Those not there already take the last places of the first ``k``
    (at most half of them), in the parts' order, before the keys they push down; those
    there already stay. The values
    are dealt again in the new order, so they still fall."""
    wanted: list[Hashable] = []
    for part in parts:
        for key in part[:per_part]:
            if key not in wanted:
                wanted.append(key)
    head = [key for key, _ in ranked[:k]]
    missing = [key for key in wanted if key not in head][: k // 2]
    if not missing:
        return list(ranked)
    present = {key for key in head if key in wanted}
    others = k - len(missing) - len(present)  # places left for the keys no part wants
    first: list[Hashable] = []
    for key, _ in ranked:
        if key in present or (key not in missing and others > 0):
            others -= key not in present
            first.append(key)
        if len(first) == k - len(missing):
            break
    order = [*first, *missing, *(key for key, _ in ranked if key not in first + missing)]
    values = sorted((value for _, value in ranked), reverse=True)
    values += [values[-1] if values else 0.0] * (len(order) - len(values))
    return list(zip(order, values, strict=True))
