"""BM25 recall: the player's term statistics kept by the index's own triggers through every
insert, delete, update and cascade, and what they rank: a rare word over a common one,
another word form of the same stem."""

from __future__ import annotations

import pytest
from django.db import connection

from console.models import Player
from memory import selectors as message_reads
from memory import services as message_store
from memory.engine import recall as terms
from memory.models import RecallItem, RecallTerm
from memory.recall import indexing
from memory.recall.search import RecallQuery, lexical_messages, recall
from tests.memory.test_recall import _conversation

pytestmark = pytest.mark.django_db(transaction=True)


def _stats(player) -> dict[str, tuple[int, int]]:
    rows = RecallTerm.objects.filter(player=player).values_list("term", "df", "length_sum")
    stats = {term: (df, length_sum) for term, df, length_sum in rows}
    assert all(df > 0 for df, _sum in stats.values()), "a term no row holds is kept"
    return stats


def _recomputed(player) -> dict[str, tuple[int, int]]:
    """The statistics counted afresh from the rows the index holds."""
    out: dict[str, tuple[int, int]] = {}
    for lexemes in RecallItem.objects.filter(player=player).values_list("lexemes", flat=True):
        found = {part.rsplit(":", 1)[0].strip("'") for part in lexemes.split(" ")}
        for term in found:
            out[term] = (out.get(term, (0, 0))[0] + 1, 0)
        rows, total = out.get("", (0, 0))
        out[""] = (rows + 1, total + len(found))
    return out


LINES = [
    ("user", "I started volunteering at the children's hospital."),
    ("assistant", "That is kind of you. How was the first day?"),
    ("user", "The first day was long but the kids were lovely."),
    ("assistant", "Do you go every day?"),
]


def test_statistics_follow_inserts_deletes_updates(tenant, player, character):
    conversation = _conversation(tenant, player, character, LINES)
    assert _stats(player) == _recomputed(player)
    assert _stats(player)[""][0] == 4
    assert _stats(player)[terms.stem("day")][0] == 3
    rows = message_reads.get_history(tenant, conversation.session_id)
    message_store.delete_messages_by_timestamps(tenant, conversation.session_id, [rows[0].ts])
    assert _stats(player) == _recomputed(player)
    assert terms.stem("hospital") not in _stats(player)
    with connection.cursor() as cursor:  # an UPDATE counts as the rows out and back in
        cursor.execute(
            f"UPDATE {RecallItem._meta.db_table} SET lexemes = %s::tsvector WHERE player_id = %s",
            ["'lantern':1", player.pk],
        )
    assert _stats(player) == {"": (3, 3), "lantern": (3, 0)}
    RecallItem.objects.filter(player=player).delete()  # forgetting everything
    assert not RecallTerm.objects.filter(player=player).exists()


def test_a_player_with_an_index_can_be_deleted(tenant, player, character):
    _conversation(tenant, player, character, LINES)
    player.delete()  # the cascade removes rows and statistics in either order
    assert not RecallTerm.objects.filter(player_id=player.pk).exists()
    assert not RecallItem.objects.filter(player_id=player.pk).exists()


def test_a_rare_word_outranks_a_common_one(tenant, player, character):
    filler = [("user", f"the weather was grey again today, day {i}") for i in range(40)]
    rare = [("user", "My cello teacher praised my bowing today.")]
    _conversation(tenant, player, character, filler + rare)
    ranked = lexical_messages(tenant, player, "what did the cello teacher say about today")
    top = RecallItem.objects.get(message_id=ranked[0])
    assert "cello teacher" in top.text


def test_another_form_of_the_word_is_found(tenant, player, character):
    _conversation(tenant, player, character, LINES)
    result = recall(tenant, player, RecallQuery("Where does she volunteer?", k=1))
    assert "volunteering at the children's hospital" in result["items"][0]["text"]


def test_statistics_are_the_players_own(tenant, player, character):
    other = Player.objects.create(tenant=tenant, external_id="p-other")
    _conversation(tenant, player, character, LINES)
    _conversation(tenant, other, character, [("user", "cello " * 3)] * 5)
    assert terms.stem("cello") not in _stats(player)
    assert _stats(other)[terms.stem("cello")][0] == 5


def test_the_same_words_said_again_are_one_hit(tenant, player, character):
    lines = []
    for i in range(6):
        lines += [("user", "Good night, Mira!"), ("assistant", f"Sleep well, traveller {i}.")]
    _conversation(tenant, player, character, lines)
    items = recall(tenant, player, RecallQuery("good night mira", k=10))["items"]
    said = [RecallItem.objects.get(message_id=item["id"]).text for item in items]
    assert said.count("Good night, Mira!") == 1


def test_a_changed_embedder_rebuilds_the_index_in_the_background(
    tenant, player, character, monkeypatch
):
    monkeypatch.setenv("RECALL_EMBEDDER", "hashing")
    _conversation(tenant, player, character, LINES)
    hashed = set(RecallItem.objects.values_list("embedder", flat=True))
    monkeypatch.delenv("RECALL_EMBEDDER")
    current = indexing.recall_embedder().embedding_version
    assert hashed and current not in hashed
    assert indexing.rebuild_stale() == 1
    assert set(RecallItem.objects.values_list("embedder", flat=True)) == {current}
    assert _stats(player) == _recomputed(player)
    assert indexing.rebuild_stale() == 0  # nothing left to move
