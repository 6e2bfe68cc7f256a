"""Recall's steps for real questions, around the whole question's hybrid ranking
(``search``): sub-queries and the people named by relation, and the time the question
names.

- :func:`parts`: each sub-query's own lexical ranking (``engine.decompose``: "X and Y",
  "before"/"after"; ``engine.entities``: "her mentor" asked as the names the turns stating
  that relation give), for ``engine.fusion.merge``; a part's hits the whole question missed
  join the candidates.
- :func:`timed`: candidates said within the time the question names
  (``engine.timerange``) score more.
- :func:`bridges`: the second hop, the names the first hits bring in
  (``engine.bridges``), each asked for by the words.

A candidate is ``message id -> (score, blend, conversation, session, ts, created_at µs,
text)``; a part-only one scores ``-inf`` on the whole question.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.engine import bridges as bridge_names
from memory.engine import decompose, entities, timerange
from memory.recall import lexical

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PARTS = True
PART_POOL = 50  # rows each sub-query ranks
ALIAS_ROWS = 20  # rows stating a relation read for the names they give
MAX_ALIASES = 2  # names asked for, per question
TIME_BOOST = 0.25  # of the best candidate's score, for a candidate in the question's time
PERSON_FIRSTS = 2  # a person's turns kept within the first k: the relation's, the fact's
BRIDGE_FROM = 3  # first hits whose names are asked for
BRIDGE_POOL = 10  # rows each name ranks
BRIDGE_MIN_K = 5  # a recall for fewer hits has no room for a second hop


def parts(tenant, player, q, by_message: dict) -> tuple[list[list], list[list]]:
    """Each sub-query's message ids, best first by its own words, as two lists: the
    question's parts, and the people it names by relation (none for a question about one
    thing); a part's hits that the whole question did not find join the candidates."""
    if not PARTS:
        return [], []
    asked, people = sub_queries(tenant, player, q)
    return _rankings(tenant, player, q, asked, by_message), _rankings(
        tenant, player, q, people, by_message
    )


def _rankings(
    tenant,
    player,
    q,
    queries: list[str],
    by_message: dict,
    *,
    pool: int = PART_POOL,
    skip: frozenset | set = frozenset(),
) -> list[list]:
    """Each query's rows by words (those in ``skip`` left out), best first, the rows new to
    ``by_message`` added to it; the queries that found nothing give no ranking."""
    rankings: list[list] = []
    for part in queries:
        ranking = []
        for row in lexical.part_rows(tenant, player, q, part, pool):
            if row[0] in skip:
                continue
            if row[0] not in by_message:
                by_message[row[0]] = (float("-inf"), 0.0, *row[1:5], row[7])
            ranking.append(row[0])
        if ranking:
            rankings.append(ranking)
    return rankings


def sub_queries(tenant, player, q) -> tuple[list[str], list[str]]:
    """The question's parts (``engine.decompose``) and, for a person named by relation
    ("her mentor"), the names the turns stating that relation give them
    (``engine.entities``), each asked with the question's other words (a Chinese name
    alone: the rest of a Chinese question is one run of characters, whose pieces would
    outweigh the name)."""
    parts = decompose.sub_queries(q.query)[: decompose.MAX_PARTS]
    relations = entities.relations(q.query)
    if not relations:
        return parts, []
    names: list[str] = []
    for relation in relations:
        said = entities.searched_as(relation)
        for row in lexical.part_rows(tenant, player, q, said, ALIAS_ROWS):
            names.extend(n for n in entities.aliases(row[7], relation) if n not in names)
    rest = [w for w in decompose.content_words(q.query) if w.lower() not in relations]
    people = [name if not name.isascii() else " ".join([name, *rest]) for name in names]
    return parts, people[:MAX_ALIASES]


def timed(tenant, player, q, by_message: dict) -> None:
    """Candidates said within the time the question names (``engine.timerange``: by the
    calendar, relative to the latest candidate, or next to an event's best hit) score
    :data:`TIME_BOOST` more."""
    if not by_message:
        return
    latest = max(row[5] for row in by_message.values())
    now = EPOCH + timedelta(microseconds=latest)
    span = timerange.absolute(q.query, now)
    anchor = timerange.anchored(q.query) if span is None else None
    if anchor is not None:
        event = lexical.part_rows(tenant, player, q, anchor.words, 1)
        if event:
            span = timerange.around(anchor, EPOCH + timedelta(microseconds=event[0][4]))
    if span is None:
        return
    boost = TIME_BOOST * max(
        (abs(row[0]) for row in by_message.values() if row[0] > float("-inf")), default=1.0
    )
    for message_id, row in list(by_message.items()):
        if row[0] > float("-inf") and span.holds(EPOCH + timedelta(microseconds=row[5])):
            by_message[message_id] = (row[0] + boost, *row[1:])


def bridges(tenant, player, q, merged: list, by_message: dict, exclude) -> list[list]:
    """The second hop: for each name the first :data:`BRIDGE_FROM` hits bring in
    (``engine.bridges``: not the question's, not a speaker's), its rows by the lexical side
    that the first ``q.k`` do not hold, best first; they join the candidates."""
    if q.k < BRIDGE_MIN_K or not merged:
        return []
    texts = [by_message[key][6] for key, _ in merged[:BRIDGE_FROM]]
    head = {key for key, _ in merged[: q.k]}
    names = bridge_names.names(texts, exclude=[q.query, *exclude])
    return _rankings(tenant, player, q, names, by_message, pool=BRIDGE_POOL, skip=head)
