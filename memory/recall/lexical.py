"""Recall's lexical side: the owner's rows ranked by BM25 with the player's own term
statistics (``RecallTerm``), as SQL the hybrid search embeds (:func:`lexical_sql`) or runs
alone: the benchmark's lexical baseline (:func:`lexical_messages`) and a sub-query's
ranking (:func:`part_rows`).
"""

from __future__ import annotations

from django.db import connection

from memory.engine import recall as terms
from memory.models import RecallItem, RecallTerm

POOL = 200  # candidates taken from each side before blending


def filters(q) -> tuple[str, dict]:
    sql, params = "", {}
    if q.conversation_id:
        sql += " AND r.conversation_id = %(conversation)s"
        params["conversation"] = q.conversation_id
    if q.character_id:
        sql += " AND r.character_id = %(character)s"
        params["character"] = q.character_id
    if q.since:
        sql += " AND r.created_at >= %(since)s"
        params["since"] = q.since
    return sql, params


def lexical_sql(tenant, player, query: str, owner: str, params: dict) -> str | None:
    """The lexical side's statement (``id, lexical``: the owner's best rows by BM25), its
    parameters added to ``params``; None when no row of the owner holds a query term.

    Each query term weighs its ``idf`` among the player's rows (``RecallTerm``); rows are
    gathered by the rarer terms (``engine.recall.candidate_terms``, through the GIN index)
    and scored on every term they hold."""
    wanted = terms.distinct_terms(query)
    if not wanted:
        return None
    stats = dict.fromkeys(wanted, (0, 0))
    stats.update(
        (term, (df, length_sum))
        for term, df, length_sum in RecallTerm.objects.filter(
            tenant=tenant, player=player, term__in=[*wanted, ""]
        ).values_list("term", "df", "length_sum")
    )
    rows, length_sum = stats.pop("", (0, 0))
    dfs = {term: df for term, (df, _sum) in stats.items()}
    gather = terms.candidate_terms(dfs, rows)
    if rows <= 0 or not gather:
        return None
    held = [term for term, df in dfs.items() if df > 0]
    params.update(
        tsq=terms.tsquery_literal(gather),
        q_terms=held,
        q_idfs=[terms.idf(rows, dfs[term]) for term in held],
        avgdl=max(length_sum / rows, 1.0),
        k1=terms.K1,
        b=terms.B,
    )
    # Only the row's query terms are unnested (marked with weight A, then kept; every stored
    # term has positions, so each can carry a weight). float8 throughout: a bound Python
    # float is a numeric literal, slow to compute with.
    own = "ts_filter(setweight(setweight(r.lexemes, 'D'), 'A', %(q_terms)s::text[]), '{a}')"
    tf = "GREATEST(cardinality(u.positions), 1)::float8"
    k1, b, avgdl = "%(k1)s::float8", "%(b)s::float8", "%(avgdl)s::float8"
    norm = f"{k1} * (1 - {b} + {b} * length(r.lexemes) / {avgdl})"
    return f"""
        SELECT r.id, SUM(q.idf * {tf} * ({k1} + 1) / ({tf} + {norm})) AS lexical
        FROM {RecallItem._meta.db_table} r
        CROSS JOIN LATERAL unnest({own}) u
        JOIN unnest(%(q_terms)s::text[], %(q_idfs)s::float8[]) AS q(term, idf)
            ON q.term = u.lexeme
        WHERE {owner} AND r.lexemes @@ %(tsq)s::tsquery
        GROUP BY r.id ORDER BY lexical DESC LIMIT %(pool)s"""


def lexical_messages(tenant, player, query: str, *, pool: int = POOL) -> list[str]:
    """Message ids best first by the lexical side alone (a message by its best chunk; a
    tie to the newer one): the benchmark's lexical-only baseline."""
    params: dict = {"tenant": tenant.pk, "player": player.pk, "pool": pool}
    owner = "r.tenant_id = %(tenant)s AND r.player_id = %(player)s"
    lexical = lexical_sql(tenant, player, query, owner, params)
    if lexical is None:
        return []
    sql = f"""
        WITH lex AS ({lexical})
        SELECT r.message_id, MAX(lex.lexical) AS rank, MAX(r.ts) AS ts
        FROM lex JOIN {RecallItem._meta.db_table} r ON r.id = lex.id
        GROUP BY r.message_id ORDER BY rank DESC, ts DESC
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [str(row[0]) for row in cursor.fetchall()]


def part_rows(tenant, player, q, part: str, pool: int) -> list[tuple]:
    """The owner's best rows for ``part`` by the lexical side alone, within ``q``'s filters,
    as the hybrid search's candidates are given (``search._message_rows``; no cosine)."""
    where, params = filters(q)
    owner = f"r.tenant_id = %(tenant)s AND r.player_id = %(player)s{where}"
    params.update(tenant=tenant.pk, player=player.pk, pool=pool)
    lexical = lexical_sql(tenant, player, part, owner, params)
    if lexical is None:
        return []
    sql = f"""
        WITH lex AS ({lexical})
        SELECT r.message_id, r.conversation_id, r.session_id, r.ts,
               (extract(epoch FROM r.created_at) * 1000000)::bigint,
               lex.lexical, NULL::float8, r.text
        FROM lex JOIN {RecallItem._meta.db_table} r ON r.id = lex.id
        ORDER BY lex.lexical DESC, r.ts DESC
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
