"""Diaries (seed 000): the cadence (20, then every 10: never at 25, once at 30), the rounds
each covers, the episode written by the conversation's model with evidence, once per round,
a model failure retried, the pack's cap on diary episodes, and the whole path from a real
turn through a real worker."""

from __future__ import annotations

import time

import pytest

from memory import packs
from memory import services as message_store
from memory.configs.services import put_settings
from memory.engine import diary
from memory.models import DiaryRun, MemoryEntry
from roleplay.llm.scripted_server import Reply
from roleplay.memory_plugin.services import diaries

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_cadence_is_twenty_then_every_ten():
    assert [r for r in range(1, 61) if diary.due(r)] == [20, 30, 40, 50, 60]
    assert not diary.due(25)
    assert list(diary.covered(20)) == list(range(1, 21))
    assert list(diary.covered(30)) == list(range(21, 31))
    assert [r for r in range(1, 20) if diary.due(r, first=5, every=3)] == [5, 8, 11, 14, 17]


def test_the_kept_text_is_one_paragraph_cut_at_a_sentence():
    assert diary.entry_text("  One.\n\nTwo.  ", 100) == "One. Two."
    cut = diary.entry_text("First sentence here. " * 20, 60)
    assert len(cut) <= 60 and cut.endswith(".")
    assert diary.entry_text("x" * 100, 10) == "x" * 9 + "…"
    assert diary.entry_text("   ", 10) == ""


def test_the_request_names_the_speakers_and_keeps_claims_as_claims():
    messages = diary.request([("user", "I will return the key."), ("assistant", "Good.")],
                             user="Ann", character="Mira")  # fmt: skip
    assert "Ann: I will return the key." in messages[1]["content"]
    assert "Mira: Good." in messages[1]["content"]
    assert "Ann said" in messages[0]["content"]


def _rounds(tenant, conversation, count: int, start: int = 1) -> None:
    for n in range(start, start + count):
        message_store.save_message(
            tenant, conversation.session_id, role="user", content=f"Round {n}: the lantern."
        )
        message_store.save_message(
            tenant, conversation.session_id, role="assistant", content=f"Reply {n}."
        )


def test_a_diary_is_written_once_with_evidence(tenant, conversation, llm):
    _rounds(tenant, conversation, 20)
    llm.default = Reply(content="Ann and Mira carried the lantern through twenty rounds.")
    assert diaries.write(str(conversation.pk), 20) == "done"
    entry = MemoryEntry.objects.get(origin="diary")
    assert entry.kind == "episode" and entry.status == "active" and entry.scope == "session"
    assert entry.content == "Ann and Mira carried the lantern through twenty rounds."
    quotes = sorted(entry.evidence.values_list("quote", flat=True))
    assert quotes == ["Reply 20.", "Round 1: the lantern."]
    sent = llm.requests[-1]["messages"][1]["content"]
    assert "Round 1: the lantern." in sent and "Reply 20." in sent
    assert diaries.write(str(conversation.pk), 20) == "skipped"
    assert MemoryEntry.objects.filter(origin="diary").count() == 1
    run = DiaryRun.objects.get()
    assert run.status == "done" and run.entry_id == entry.pk and run.attempts == 1


def test_the_next_diary_covers_only_its_rounds(tenant, conversation, llm):
    _rounds(tenant, conversation, 30)
    diaries.write(str(conversation.pk), 30)
    sent = llm.requests[-1]["messages"][1]["content"]
    assert "Round 21:" in sent and "Reply 30." in sent and "Round 20:" not in sent


def test_a_model_failure_is_recorded_and_tried_again(tenant, conversation, llm):
    _rounds(tenant, conversation, 20)
    llm.enqueue(*[Reply(status=500)] * 5)
    assert diaries.write(str(conversation.pk), 20) == "failed"
    run = DiaryRun.objects.get()
    assert run.status == "failed" and run.error_code and not MemoryEntry.objects.exists()
    llm.clear()
    assert diaries.write(str(conversation.pk), 20) == "done"
    run.refresh_from_db()
    assert run.attempts == 2 and run.entry_id is not None


def test_only_a_diary_round_with_diaries_on_is_due(tenant, conversation, llm):
    def due():
        return diaries.due_round(tenant, conversation.session_id, str(conversation.character_id))

    _rounds(tenant, conversation, 20)
    assert due() == 20
    diaries.write(str(conversation.pk), 20)
    assert due() is None  # written already
    _rounds(tenant, conversation, 5, start=21)
    assert due() is None  # never at 25
    _rounds(tenant, conversation, 5, start=26)
    assert due() == 30
    put_settings(tenant, {"diaries": False})
    assert due() is None
    put_settings(tenant, {"diary_first_round": 10, "diary_every_rounds": 4})
    assert due() == 30  # 10, 14, 18, 22, 26, 30


def test_the_pack_carries_at_most_the_allowed_diaries(tenant, player, conversation):
    from memory.entries.services import add_entry

    for n in range(3):
        add_entry(
            tenant, player, kind="episode", scope="shared", origin="diary",
            content=f"Diary {n}: the lantern was lit.",
        )  # fmt: skip
    owner = packs.Owner(
        str(tenant.pk), str(player.pk), str(conversation.character_id), str(conversation.pk)
    )
    items = [{"kind": "entry", "id": str(e.pk), "message_ids": []}
             for e in MemoryEntry.objects.all()]  # fmt: skip
    assert len(packs._cap_diaries(tenant, owner, items)) == 1
    put_settings(tenant, {"episode_recall_count": 2})
    assert len(packs._cap_diaries(tenant, owner, items)) == 2


def test_a_real_turn_at_round_twenty_writes_the_diary(
    celery_worker, api, tenant, conversation, llm
):
    _rounds(tenant, conversation, 19)
    response = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": "r20", "content": "Round 20: we reach the tower."},
        format="json",
    )
    assert response.status_code == 201, response.content
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not MemoryEntry.objects.filter(origin="diary"):
        time.sleep(0.2)
    entry = MemoryEntry.objects.get(origin="diary")
    assert entry.session_id == conversation.session_id
    assert DiaryRun.objects.get().through_round == 20


def test_a_diary_that_finally_fails_leaves_its_rounds_for_the_next(tenant, conversation, llm):
    _rounds(tenant, conversation, 30)
    for _ in range(diaries.MAX_ATTEMPTS):
        llm.enqueue(*[Reply(status=500)] * 5)
        assert diaries.write(str(conversation.pk), 20) == "failed"
    assert diaries.write(str(conversation.pk), 20) == "skipped"  # no attempt left
    llm.clear()
    llm.default = Reply(content="Thirty rounds of the lantern.")
    assert diaries.write(str(conversation.pk), 30) == "done"
    sent = llm.requests[-1]["messages"][1]["content"]
    assert "Round 1: the lantern." in sent and "Round 20:" in sent and "Reply 30." in sent
    entry = MemoryEntry.objects.get(origin="diary")
    assert sorted(entry.evidence.values_list("quote", flat=True)) == [
        "Reply 30.",
        "Round 1: the lantern.",
    ]
    # The failed diary's retry finds its rounds written by the later one.
    assert diaries.write(str(conversation.pk), 20) == "skipped"


def test_the_task_retries_a_failed_diary_with_a_backoff(tenant, conversation, llm):
    from roleplay.tasks import write_diary

    _rounds(tenant, conversation, 20)
    llm.enqueue(*[Reply(status=500)] * 5)  # the first attempt fails, gateway retries too
    llm.default = Reply(content="Twenty rounds of the lantern.")
    # An eager run retries at once; a worker waits the backoff (``diary.RETRY_BACKOFF_S``).
    assert write_diary.apply(args=[str(conversation.pk), 20]).get() == "done"
    run = DiaryRun.objects.get()
    assert (run.status, run.attempts) == ("done", 2)
    assert diary.retry_delay(1) < diary.retry_delay(2)
    assert diary.retry_delay(diaries.MAX_ATTEMPTS) is None
