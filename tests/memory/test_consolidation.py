"""Background consolidation (seed 004) against the real database and the scripted model:
disabled means no model call, candidates with evidence, the cursor (replay never collects
twice), whole-batch refusal, a model failure keeping the batch, the epoch making a late
result stale, one run per owner under racing workers, repeats merged, a clear dropping what
waits, the API, and the whole path from real turns through a real worker."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory import owners
from memory import services as message_store
from memory.configs.services import put_settings
from memory.entries.services import add_entry, delete_entry
from memory.forget import forget
from memory.models import ConsolidationCursor, ConsolidationRun, MemoryEntry, Message
from roleplay.llm.scripted_server import Reply
from roleplay.memory_plugin.services import consolidation
from roleplay.models import Character, Conversation

pytestmark = pytest.mark.django_db(transaction=True)

LINES = [
    "I moved to Lisbon last spring with my two cats.",
    "Please keep your replies short.",
    "For all characters: call me Sam.",
]


def _on(tenant, **extra):
    put_settings(tenant, {"consolidation": {"enabled": True, **extra}})


def _say(tenant, conversation, *lines):
    out = []
    for line in lines:
        out.append(message_store.save_message(tenant, conversation.session_id, role="user",
                                              content=line))  # fmt: skip
        message_store.save_message(tenant, conversation.session_id, role="assistant",
                                   content=f"(Mira answers: {line})")  # fmt: skip
    return out


def _answer(*candidates):
    return Reply(content=json.dumps({"candidates": list(candidates)}))


def _fact(message, quote="Lisbon", **extra):
    item = {
        "kind": "fact",
        "scope": "persona",
        "content": "Ann lives in Lisbon with two cats.",
        "evidence": [{"message_id": str(message.pk), "quote": quote}],
    }
    return item | extra


def _cursor(conversation, backlog=32):
    return consolidation.ensure_cursor(
        Conversation.objects.select_related("tenant", "player").get(pk=conversation.pk),
        backlog=backlog,
    )


def test_switched_off_nothing_is_collected_and_no_model_is_called(tenant, conversation, llm):
    _say(tenant, conversation, *LINES)
    assert consolidation.run(str(conversation.pk)) == "disabled"
    assert llm.requests == [] and not ConsolidationRun.objects.exists()
    put_settings(tenant, {"enabled": False, "consolidation": {"enabled": True}})
    assert consolidation.run(str(conversation.pk)) == "disabled"
    assert llm.requests == []


def test_a_batch_becomes_candidates_with_evidence_and_is_never_taken_twice(
    tenant, conversation, llm
):
    _on(tenant)
    said = _say(tenant, conversation, *LINES)
    _cursor(conversation)
    llm.default = _answer(_fact(said[0], quote="moved to Lisbon"))
    assert consolidation.run(str(conversation.pk)) == "done"
    entry = MemoryEntry.objects.get()
    assert (entry.status, entry.origin, entry.kind) == ("candidate", "consolidation", "fact")
    assert entry.character_id == str(conversation.character_id) and entry.session_id == ""
    [proof] = entry.evidence.all()
    assert proof.message_id == said[0].pk and proof.quote == "moved to Lisbon"
    assert (proof.start, proof.end) == (2, 2 + len("moved to Lisbon"))
    sent = llm.requests[-1]
    assert sent["response_format"]["type"] == "json_schema"
    text = sent["messages"][1]["content"]
    assert all(line in text for line in LINES) and "Mira answers" not in text
    run = ConsolidationRun.objects.get()
    assert run.status == "done" and run.added == 1 and len(run.message_ids) == 3
    assert run.model_call_ids
    assert ConsolidationCursor.objects.get().through_ts == said[-1].ts
    assert consolidation.run(str(conversation.pk)) == "empty"  # replay collects nothing
    assert len(llm.requests) == 1
    more = _say(tenant, conversation, "My sister is called Ines.")
    llm.default = _answer(_fact(more[0], quote="Ines", content="Ann's sister is Ines."))
    assert consolidation.run(str(conversation.pk)) == "done"
    assert "Lisbon" not in llm.requests[-1]["messages"][1]["content"]  # only its own batch


def test_a_batch_holds_at_most_twelve_and_the_rest_wait(tenant, conversation, llm):
    _on(tenant)
    _say(tenant, conversation, *[f"Line {n}" for n in range(15)])
    _cursor(conversation)
    llm.default = _answer()
    assert consolidation.run(str(conversation.pk)) == "done"
    assert len(ConsolidationRun.objects.get().message_ids) == 12
    assert consolidation.run(str(conversation.pk)) == "done"
    assert "Line 14" in llm.requests[-1]["messages"][1]["content"]
    assert consolidation.run(str(conversation.pk)) == "empty"


def test_one_bad_citation_refuses_the_whole_batch_which_is_kept_then_dropped(
    tenant, conversation, llm
):
    _on(tenant)
    said = _say(tenant, conversation, *LINES)
    cursor = _cursor(conversation)
    llm.default = _answer(_fact(said[0]), _fact(said[1], quote="not in the message"))
    assert consolidation.run(str(conversation.pk)) == "rejected"
    assert not MemoryEntry.objects.exists()
    run = ConsolidationRun.objects.get()
    assert run.error_code == "quote_mismatch" and "candidates[1]" in run.detail
    cursor.refresh_from_db()
    assert cursor.failures == 1 and cursor.through_ts < said[0].ts  # kept for a retry
    for _ in range(2):
        assert consolidation.run(str(conversation.pk)) == "rejected"
    cursor.refresh_from_db()
    assert cursor.through_ts == said[-1].ts and cursor.failures == 0  # dropped after three


def test_a_citation_of_another_conversation_or_an_assistant_message_is_refused(
    tenant, player, character, conversation, llm
):
    _on(tenant)
    other = Conversation.objects.create(tenant=tenant, player=player, character=character)
    [elsewhere] = _say(tenant, other, "I moved to Lisbon.")
    said = _say(tenant, conversation, *LINES)
    _cursor(conversation)
    llm.default = _answer(_fact(elsewhere))
    assert consolidation.run(str(conversation.pk)) == "rejected"
    assert ConsolidationRun.objects.latest("created_at").error_code == "cross_conversation"
    reply = Message.objects.filter(session_id=conversation.session_id, role="assistant").first()
    llm.default = _answer(_fact(said[0]) | {"evidence": [{"message_id": str(reply.pk),
                                                          "quote": "Mira"}]})  # fmt: skip
    assert consolidation.run(str(conversation.pk)) == "rejected"
    assert ConsolidationRun.objects.latest("created_at").error_code == "unknown_message"
    stranger = Character.objects.create(tenant=tenant, name="Kai")
    third = Conversation.objects.create(tenant=tenant, player=player, character=stranger)
    [persona] = _say(tenant, third, "I moved to Lisbon.")
    llm.default = _answer(_fact(persona))
    assert consolidation.run(str(conversation.pk)) == "rejected"
    assert ConsolidationRun.objects.latest("created_at").error_code == "cross_persona"
    assert not MemoryEntry.objects.exists()


def test_the_sweep_sends_runs_for_messages_that_waited(tenant, conversation, llm, monkeypatch):
    sent = []
    monkeypatch.setattr(consolidation, "_send", sent.append)
    _on(tenant, interval_minutes=5)
    _say(tenant, conversation, *LINES)
    cursor = _cursor(conversation)
    assert consolidation.sweep() == 0  # the cursor is new: nothing waited five minutes
    ConsolidationCursor.objects.filter(pk=cursor.pk).update(
        created_at=timezone.now() - timedelta(minutes=6)
    )
    assert consolidation.sweep() == 1 and sent == [cursor.conversation_id]
    ConsolidationCursor.objects.filter(pk=cursor.pk).update(through_ts=10**15)
    assert consolidation.sweep() == 0 and len(sent) == 1  # nothing waits


def test_shared_without_a_statement_for_everyone_is_refused(tenant, conversation, llm):
    _on(tenant)
    said = _say(tenant, conversation, *LINES)
    _cursor(conversation)
    llm.default = _answer(_fact(said[0], scope="shared"))
    assert consolidation.run(str(conversation.pk)) == "rejected"
    llm.default = _answer(_fact(said[2], quote="call me Sam", kind="preference", scope="shared",
                                content="Call the player Sam."))  # fmt: skip
    assert consolidation.run(str(conversation.pk)) == "done"
    entry = MemoryEntry.objects.get()
    assert entry.scope == "shared" and entry.character_id == ""


def test_a_model_failure_keeps_the_batch_for_a_retry(tenant, conversation, llm):
    _on(tenant)
    said = _say(tenant, conversation, *LINES)
    cursor = _cursor(conversation)
    llm.default = Reply(status=500)
    assert consolidation.run(str(conversation.pk)) == "failed"
    llm.default = Reply(content="Sure! Here you go: nothing.")
    assert consolidation.run(str(conversation.pk)) == "failed"
    assert ConsolidationRun.objects.latest("created_at").error_code == "unparsable_answer"
    cursor.refresh_from_db()
    assert cursor.through_ts < said[0].ts
    llm.default = _answer(_fact(said[0]))
    assert consolidation.run(str(conversation.pk)) == "done"
    assert MemoryEntry.objects.count() == 1


def test_a_change_by_a_person_during_the_run_makes_it_stale(tenant, player, conversation, llm):
    _on(tenant)
    said = _say(tenant, conversation, *LINES)
    _cursor(conversation)
    kept = add_entry(tenant, player, kind="fact", scope="shared", content="Ann likes tea.")

    def answer(_request):
        delete_entry(tenant, MemoryEntry.objects.get(pk=kept.pk), kept.version)  # meanwhile
        return _answer(_fact(said[0]))

    llm.default = Reply.from_callable(answer)
    assert consolidation.run(str(conversation.pk)) == "stale"
    assert not MemoryEntry.objects.exists()
    assert ConsolidationCursor.objects.get().through_ts == said[-1].ts  # not learned back


def test_switching_it_off_during_the_run_makes_it_stale(tenant, conversation, llm):
    _on(tenant)
    said = _say(tenant, conversation, *LINES)
    _cursor(conversation)

    def answer(_request):
        put_settings(tenant, {"consolidation": {"enabled": False}})
        return _answer(_fact(said[0]))

    llm.default = Reply.from_callable(answer)
    assert consolidation.run(str(conversation.pk)) == "stale"
    assert not MemoryEntry.objects.exists()


def test_one_run_per_owner_even_when_workers_race(
    tenant, player, character, conversation, llm, settings
):
    settings.MEMORY_CONSOLIDATION_CONCURRENCY = 4
    _on(tenant)
    second = Conversation.objects.create(tenant=tenant, player=player, character=character)
    for each in (conversation, second):
        _say(tenant, each, *LINES)
        _cursor(each)
    llm.default = Reply(content=json.dumps({"candidates": []}), delay=1.0)
    outcomes = []

    def work(conversation_id):
        from django.db import connection

        try:
            outcomes.append(consolidation.run(conversation_id))
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(str(c.pk),)) for c in (conversation, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == ["busy", "done"]
    with pytest.raises(IntegrityError), transaction.atomic():
        for each in (conversation, second):
            ConsolidationRun.objects.create(tenant=tenant, player=player,
                                            session_id=each.session_id,
                                            conversation_id=each.pk)  # fmt: skip


def test_the_deployment_cap_holds_runs_of_other_owners(tenant, conversation, llm, settings):
    settings.MEMORY_CONSOLIDATION_CONCURRENCY = 1
    _on(tenant)
    _say(tenant, conversation, *LINES)
    _cursor(conversation)
    from console.models import Player

    stranger = Player.objects.create(tenant=tenant, external_id="p-2")
    ConsolidationRun.objects.create(tenant=tenant, player=stranger, session_id="s",
                                    conversation_id=conversation.pk)  # fmt: skip
    assert consolidation.run(str(conversation.pk)) == "busy"
    assert llm.requests == []


def test_a_repeat_adds_evidence_to_the_entry_it_repeats(tenant, player, conversation, llm):
    _on(tenant, dedupe_similarity=0.8)
    said = _say(tenant, conversation, *LINES)
    _cursor(conversation)
    same = add_entry(tenant, player, kind="fact", scope="persona",
                     character_id=str(conversation.character_id),
                     content="ann lives in Lisbon   with two cats.")  # fmt: skip
    near = add_entry(tenant, player, kind="preference", scope="persona",
                     character_id=str(conversation.character_id),
                     content="Keep the replies short.")  # fmt: skip
    llm.default = _answer(
        _fact(said[0]),
        _fact(said[1], quote="keep your replies short", kind="preference",
              content="Keep the replies short!"),
    )  # fmt: skip
    assert consolidation.run(str(conversation.pk)) == "done"
    assert MemoryEntry.objects.count() == 2
    assert same.evidence.get().message_id == said[0].pk
    assert near.evidence.get().message_id == said[1].pk
    run = ConsolidationRun.objects.get()
    assert (run.added, run.merged) == (0, 2)


def test_a_clear_drops_what_waits(tenant, player, conversation, llm):
    _on(tenant)
    said = _say(tenant, conversation, *LINES)
    _cursor(conversation)
    forget(tenant, scope="player", player=player, player_sessions=[conversation.session_id])
    assert ConsolidationCursor.objects.get().through_ts >= said[-1].ts
    assert consolidation.run(str(conversation.pk)) == "empty"
    assert llm.requests == []


def test_the_api_asks_for_a_run_and_lists_runs(
    tenant, player, conversation, llm, api, api_client_for, other_tenant
):
    path = f"/api/v1/players/{player.pk}/memory"
    _say(tenant, conversation, *LINES)
    refused = api.post(f"{path}/consolidate", {}, format="json")
    assert (
        refused.status_code == 409 and refused.json()["error"]["code"] == "consolidation_disabled"
    )
    _on(tenant)
    bad = api.post(f"{path}/consolidate", {"conversation": "x", "extra": 1}, format="json")
    assert bad.status_code in (400, 422) and not ConsolidationCursor.objects.exists()
    sent = api.post(f"{path}/consolidate", {"conversation": str(conversation.pk)}, format="json")
    assert sent.status_code == 202 and sent.json() == {"queued": [str(conversation.pk)]}
    cursor = ConsolidationCursor.objects.get()
    assert cursor.through_ts < min(m.ts for m in message_store_messages(tenant, conversation))
    llm.default = _answer()
    consolidation.run(str(conversation.pk))
    runs = api.get(f"{path}/consolidations").json()["results"]
    assert [r["status"] for r in runs] == ["done"] and len(runs[0]["message_ids"]) == 3
    foreign = api_client_for(other_tenant).get(f"{path}/consolidations")
    assert foreign.status_code == 404


def message_store_messages(tenant, conversation):
    return Message.objects.filter(tenant=tenant, session_id=conversation.session_id, role="user")


def test_real_turns_start_a_run_early_through_the_worker(
    celery_worker, api, tenant, player, conversation, llm
):
    _on(tenant, early_messages=2)

    def reply(request):
        if request.get("response_format"):
            said = message_store_messages(tenant, conversation).order_by("ts").first()
            return _answer(_fact(said, quote="Lisbon"))
        return Reply(content="Noted.", chunks=2)

    llm.default = Reply.from_callable(reply)
    for n, line in enumerate(LINES[:2]):
        response = api.post(
            f"/api/v1/conversations/{conversation.pk}/turns/run",
            {"client_message_id": f"c{n}", "content": line},
            format="json",
        )
        assert response.status_code == 201, response.content
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not MemoryEntry.objects.filter(origin="consolidation"):
        time.sleep(0.2)
    entry = MemoryEntry.objects.get(origin="consolidation")
    assert entry.status == "candidate" and entry.evidence.get().quote == "Lisbon"
    assert owners.state(tenant, player.pk)[0] >= 1


def test_an_unexpected_error_closes_the_run_and_frees_the_owner(
    tenant, conversation, llm, monkeypatch
):
    _on(tenant)
    said = _say(tenant, conversation, *LINES)
    _cursor(conversation)

    def broken(_conversation):
        raise RuntimeError("boom")

    monkeypatch.setattr(consolidation, "persona_for", broken)
    assert consolidation.run(str(conversation.pk)) == "failed"
    assert ConsolidationRun.objects.get().error_code == "internal_error"
    monkeypatch.undo()
    llm.default = _answer(_fact(said[0]))
    assert consolidation.run(str(conversation.pk)) == "done"  # not "busy": the owner is free


def test_switched_off_and_on_again_it_starts_after_that_moment(tenant, conversation, llm):
    from memory.configs.services import delete_settings

    _on(tenant)
    said = _say(tenant, conversation, "I moved to Lisbon last spring.")
    _cursor(conversation)
    llm.default = _answer()
    assert consolidation.run(str(conversation.pk)) == "done"
    character = str(conversation.character_id)

    def switched(off, on, words):
        off()
        _say(tenant, conversation, f"Said while off: {words}.")
        on()
        later = _say(tenant, conversation, f"Said after: {words}.")
        assert consolidation.run(str(conversation.pk)) == "done"
        sent = llm.requests[-1]["messages"][1]["content"]
        assert f"Said after: {words}." in sent and "while off" not in sent
        return later

    # The tenant's switch, the character's override, and memory itself.
    switched(
        lambda: put_settings(tenant, {"consolidation": {"enabled": False}}),
        lambda: _on(tenant),
        "the tenant",
    )
    switched(
        lambda: put_settings(tenant, {"consolidation": None}, character_id=character),
        lambda: delete_settings(tenant, character_id=character),
        "the character",
    )
    last = switched(
        lambda: put_settings(tenant, {"enabled": False, "consolidation": {"enabled": True}}),
        lambda: _on(tenant),
        "memory",
    )
    assert ConsolidationCursor.objects.get().through_ts == last[-1].ts > said[-1].ts
    # A change that leaves it on moves nothing: what waits still waits.
    waiting = _say(tenant, conversation, "My sister is Ines.")
    _on(tenant, interval_minutes=7)
    assert consolidation.pending(_cursor(conversation), 32)[0].id == str(waiting[0].pk)


def test_the_console_says_it_starts_after_it_is_switched_on(operator_user):
    from django.test import Client

    client = Client()
    client.force_login(operator_user)
    for page in ("/console/memory/settings/", "/console/memory/jobs/"):
        html = client.get(page).content.decode()
        assert "starts from the messages sent after that moment" in html, page
