"""A player's edit or delete of a message a compaction summary was built from (seed 002,
Compact: "历史删改…无法证明旧摘要能与当前历史衔接时，不应继续当成可靠前缀"): the next turn's Actor
must not read the edited-away fact through the summary. It reads the newest earlier
version that the change left intact (the summary from before that message), or the
history whole and a new compaction. This holds in a long conversation too, where the
first covered message is older than the 200 messages a turn reads. Real PostgreSQL, Redis,
the scripted model server (the compactor keeps every fact marker it is given), the real
edit and rollback services, the chat socket."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from memory import services as message_store
from roleplay.compact import model as compact_model
from roleplay.compact.engine import checkpoint as cp
from roleplay.compact.services import checkpoints as store
from roleplay.conversations.services import messages
from roleplay.models import CompactCheckpoint, ModelConfig, Scenario
from roleplay.scenarios.selectors import compact_config
from tests.compact.test_compact_turns import Script, actor_requests, chat, compact_trace
from tests.ws.test_chat_socket import connect

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

SEEDED = 230  # more than the 200 messages a turn reads
GONE, KEEP = 120, 100  # the seeded messages holding FACT-GONE and FACT-KEEP


@pytest.fixture
def long_conversation(compact_conversation, tenant, llm):
    """230 short messages already said; the compactor has a window of its own that holds
    them all."""
    wide = ModelConfig.objects.create(
        tenant=tenant,
        name="wide-compactor",
        provider="openai_compatible",
        model="scripted-model",
        base_url=llm.base_url,
        context_limit=16384,
        max_output_tokens=256,
        timeout_ms=5000,
    )
    scenario = Scenario.objects.get(pk=compact_conversation.scenario_id)
    scenario.compact = {**scenario.compact, "compactorModelConfigId": str(wide.pk)}
    scenario.save(update_fields=["compact"])
    seeded = []
    for i in range(SEEDED):
        fact = {GONE: " FACT-GONE", KEEP: " FACT-KEEP"}.get(i, "")
        role = "user" if i % 2 == 0 else "assistant"
        seeded.append(
            message_store.save_message(
                tenant,
                str(compact_conversation.session_id),
                role=role,
                content=f"line {i}:{fact} the sea is calm tonight.",
            )
        )
    compact_conversation.seeded = seeded
    return compact_conversation


async def compacted_once(comm) -> dict:
    events = await chat(comm, "FACT-T1 tell me about the harbour.", "t1")
    assert events[-1]["type"] == "turn.completed", events[-1]
    trace = await compact_trace(events[-1]["turn_id"])
    assert trace["outcome"] == "compacted", trace["steps"]
    return trace


async def test_an_edit_of_a_covered_message_older_than_the_window_reaches_no_actor(
    long_conversation, llm
):
    conversation = long_conversation
    Script(llm)
    comm = await connect(conversation)
    await compacted_once(comm)
    row = await CompactCheckpoint.objects.aget(conversation=conversation, version=1)
    assert "FACT-GONE" in json.dumps(row.summary)
    first = [str(m.id) for m in conversation.seeded].index(str(row.first_message_id))
    assert first < GONE  # the edited message is covered
    # the player edits it (the REST and socket edit's service)
    await sync_to_async(messages.edit_message)(
        conversation,
        conversation.seeded[GONE].id,
        f"line {GONE}: FACT-NEWER the sea is rough.",
        editor="player",
    )
    # the next turn reads 200 messages: the first covered one is no longer among them
    events = await chat(comm, "FACT-T2 and then?", "t2")
    assert events[-1]["type"] == "turn.completed", events[-1]
    text = json.dumps(actor_requests(llm)[-1]["messages"])
    assert "FACT-GONE" not in text
    assert "FACT-NEWER" in text and "FACT-KEEP" in text
    await comm.disconnect()


async def test_a_rollback_into_covered_history_reaches_no_actor(long_conversation, llm):
    conversation = long_conversation
    Script(llm)
    comm = await connect(conversation)
    await compacted_once(comm)
    # the player rolls back to the message after FACT-KEEP's: FACT-GONE's is deleted too
    await sync_to_async(messages.rollback_to)(conversation, conversation.seeded[KEEP + 1].id)
    events = await chat(comm, "FACT-T2 and then?", "t2")
    assert events[-1]["type"] == "turn.completed", events[-1]
    text = json.dumps(actor_requests(llm)[-1]["messages"])
    assert "FACT-GONE" not in text and "FACT-T1" not in text
    assert "FACT-KEEP" in text
    await comm.disconnect()


async def test_an_edit_brings_back_the_summary_from_before_the_edited_message(
    long_conversation, llm
):
    """Two versions: v1 summarises up to before FACT-GONE's message (and what only a
    summary still knows, FACT-ANCIENT), v2 goes on past it. Editing that message
    invalidates v2 and serves v1 again (as v3), so nothing older is lost."""
    conversation = long_conversation
    seeded = conversation.seeded
    scenario = await Scenario.objects.aget(pk=conversation.scenario_id)
    config = compact_config(scenario)
    character = await sync_to_async(lambda: conversation.character)()
    fp = compact_model.config_fingerprint(character, config)
    ids = (conversation.tenant_id, conversation.pk, scenario.pk)

    def summary(*facts: str) -> dict:
        return {"format": "structured_json", "canonical": list(facts), "interaction": [],
                "open_threads": []}  # fmt: skip

    v1 = cp.successor(None, seeded, seeded[31:100], summary("FACT-ANCIENT"), config_fp=fp,
                      expected=0)  # fmt: skip
    v2 = cp.successor(v1, seeded, seeded[100:200],
                      summary("FACT-ANCIENT", "FACT-KEEP", "FACT-GONE"), config_fp=fp,
                      expected=1)  # fmt: skip
    save = sync_to_async(store.save)
    await save(*ids, v1, expected=0, audit={"by": "test"})
    await save(*ids, v2, expected=1, audit={"by": "test"})
    await sync_to_async(messages.edit_message)(
        conversation, seeded[GONE].id, f"line {GONE}: FACT-NEWER the sea is rough.", editor="p"
    )
    rows = {r.version: r async for r in CompactCheckpoint.objects.filter(conversation=conversation)}
    assert rows[2].status == "invalidated" and rows[2].reason == "covered_content_changed"
    assert rows[3].status == "active" and rows[3].audit["restored_from"] == 1
    assert rows[3].summary == v1.summary and str(rows[3].last_message_id) == v1.last_id
    Script(llm)
    comm = await connect(conversation)
    events = await chat(comm, "FACT-T1 and then?", "t1")
    trace = await compact_trace(events[-1]["turn_id"])
    assert any(s["step"] == "read_back" and s["ok"] and s["version"] == 3 for s in trace["steps"])
    text = json.dumps(actor_requests(llm)[-1]["messages"])
    assert "FACT-GONE" not in text
    assert all(fact in text for fact in ("FACT-ANCIENT", "FACT-KEEP", "FACT-NEWER"))
    await comm.disconnect()
