"""A player's own HNSW index once their recall rows are many: built by the indexing task's
request, used by their unfiltered recall (and only theirs), never by a filtered one, and
dropped when it serves no one, never touching the table's other indexes."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.models import Player
from memory.models import RecallItem, RecallOwnerIndex
from memory.recall import owner_index
from memory.recall.embedder import recall_embedder
from tests.memory.test_recall import _conversation, _recall

pytestmark = pytest.mark.django_db(transaction=True)

SIZE = 24
LINES = [
    ("user" if n % 2 == 0 else "assistant", f"Line {n}: we talk about the {topic} today.")
    for n, topic in enumerate(
        ["lighthouse", "copper key", "harbour", "fog", "violin", "market", "garden", "storm"] * 4
    )
]


@pytest.fixture(autouse=True)
def small_size(monkeypatch):
    monkeypatch.setattr(owner_index, "OWNER_INDEX_ROWS", SIZE)
    yield
    RecallOwnerIndex.objects.all().delete()
    owner_index.prune()


def _indexes() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = %s",
            [RecallItem._meta.db_table],
        )
        return {row[0] for row in cursor.fetchall()}


def _plan(statement: str) -> str:
    """The plan of a captured recall statement, sorting made dear (the tables are tiny: this
    asks whether the owner's index can serve it, not whether it is cheaper here)."""
    statement = statement.split(";", 1)[1] if statement.startswith("SET LOCAL") else statement
    with connection.cursor() as cursor:
        cursor.execute("SET enable_sort = off")
        try:
            cursor.execute("EXPLAIN " + statement)
            return "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("RESET enable_sort")


def _recall_statement(api, player, **body) -> tuple[list, str]:
    with CaptureQueriesContext(connection) as queries:
        items = _recall(api, player, **body).json()["items"]
    return items, next(q["sql"] for q in queries.captured_queries if "WITH lex" in q["sql"])


def test_an_owner_past_the_size_gets_an_index_that_their_recall_uses(
    api, tenant, player, character
):
    _conversation(tenant, player, character, LINES[: SIZE - 2])
    assert not owner_index.wanted(tenant, player.pk)
    assert owner_index.build(tenant, player.pk) is None  # not due yet
    _conversation(tenant, player, character, LINES[SIZE - 2 :])
    assert owner_index.wanted(tenant, player.pk)
    before, exact_sql = _recall_statement(api, player, query="the copper key and the fog", k=5)
    built = owner_index.build(tenant, player.pk)
    assert built is not None and built.rows == len(LINES) and built.dimensions > 0
    assert built.embedder == recall_embedder(tenant).embedding_version
    assert built.name in _indexes() and not owner_index.wanted(tenant, player.pk)
    assert owner_index.build(tenant, player.pk) is None  # one is enough
    after, indexed_sql = _recall_statement(api, player, query="the copper key and the fog", k=5)
    assert built.name in _plan(indexed_sql) and built.name not in _plan(exact_sql)
    assert [i["id"] for i in after] == [i["id"] for i in before]  # small: the same answer


def test_another_players_rows_never_come_back_through_it(api, tenant, player, character):
    _conversation(tenant, player, character, LINES)
    assert owner_index.build(tenant, player.pk) is not None
    neighbour = Player.objects.create(tenant=tenant, external_id="neighbour")
    theirs = [("user", "The zeppelin over the lighthouse is mine alone.")]
    _conversation(tenant, neighbour, character, theirs)
    items, _sql = _recall_statement(api, player, query="zeppelin over the lighthouse", k=50)
    assert items and all("zeppelin" not in item["text"] for item in items)
    mine = _recall(api, neighbour, query="zeppelin", k=5).json()["items"]
    assert ["zeppelin" in item["text"] for item in mine] == [True]


def test_a_filtered_recall_keeps_the_exact_search(api, tenant, player, character):
    conversation = _conversation(tenant, player, character, LINES)
    built = owner_index.build(tenant, player.pk)
    body = {"query": "the harbour storm", "k": 5, "conversation": str(conversation.pk)}
    items, statement = _recall_statement(api, player, **body)
    assert items and {item["conversation_id"] for item in items} == {str(conversation.pk)}
    assert "SET LOCAL" not in statement and built.name not in _plan(statement)


def test_the_indexing_task_asks_for_the_build(tenant, player, character):
    from console.celery import app
    from memory import tasks

    conversation = _conversation(tenant, player, character, LINES)
    ids = list(RecallItem.objects.filter(player=player).values_list("message_id", flat=True))
    RecallItem.objects.filter(message_id=ids[-1]).delete()  # left to index again
    previous, app.conf.task_always_eager = app.conf.task_always_eager, True  # built here, now
    try:
        tasks.index_messages(
            str(tenant.pk), conversation.session_id, str(player.pk), str(character.pk),
            str(conversation.pk), [str(ids[-1])],
        )  # fmt: skip
    finally:
        app.conf.task_always_eager = previous
    assert RecallOwnerIndex.objects.filter(player=player).count() == 1


def test_prune_drops_what_serves_no_one_and_nothing_else(tenant, player, character):
    _conversation(tenant, player, character, LINES)
    built = owner_index.build(tenant, player.pk)
    others = _indexes() - {built.name}
    with connection.cursor() as cursor:  # an operator's own index with a similar name
        cursor.execute(f"CREATE INDEX recall_hnsw_manual ON {RecallItem._meta.db_table} (ts)")
    try:
        assert owner_index.prune() == 0 and built.name in _indexes()
        player.delete()  # its registry row goes with it; its index is left to the sweep
        assert owner_index.prune() == 1
        assert _indexes() == others | {"recall_hnsw_manual"}
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX IF EXISTS recall_hnsw_manual")


def test_an_index_of_an_embedder_no_longer_used_is_dropped(tenant, player, character):
    _conversation(tenant, player, character, LINES)
    built = owner_index.build(tenant, player.pk)
    RecallOwnerIndex.objects.filter(pk=built.pk).update(embedder="retired-embedder")
    assert owner_index.prune() == 1
    assert built.name not in _indexes() and not RecallOwnerIndex.objects.exists()
