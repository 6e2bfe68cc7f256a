"""A tenant holding one of (nearly) everything, built by the API tests' world and the
matrices' worldbook, for the backup's round trips."""

from __future__ import annotations

import io

import pytest


@pytest.fixture
def full_tenant(make_tenant, llm, api_client_for):
    """A tenant with runtime objects, memory, Story and Agent V2 state, a checkpoint, images,
    regex scripts, tools and a published worldbook bound to a prompt."""
    from tests.matrix.world import build_tenancy

    tenant = make_tenant("source-tenant")
    tenancy = build_tenancy(tenant, llm.base_url, "src", api_client_for)
    add_more(tenancy.objects)
    add_indexes(tenancy)
    return tenancy


CARD = {
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {
        "name": "Imported Mira",
        "description": "A keeper.",
        "first_mes": "Hello.",
        "character_book": {
            "name": "Mira's book",
            "entries": [
                {
                    "keys": ["lamp"],
                    "content": "The lamp is old.",
                    "enabled": True,
                    "insertion_order": 1,
                    "id": 1,
                }
            ],
        },
    },
}


def add_more(world) -> None:
    """What the API world lacks: a memory document, an alternative and an edit of a message,
    an imported card (with its book), Agent V2 ledger entries named by id in a planning run's
    record (an integer id inside JSON), and a consolidation run naming a model call."""
    import json

    from memory.alternatives import add_alternative, edit_message
    from memory.documents.services import put_document
    from memory.models import ConsolidationRun
    from roleplay.agentic.services import agent_state
    from roleplay.characters.services.card_import import import_card
    from roleplay.models import AgentLedgerEntry, ModelCall, PlanningRun

    tenant, conversation = world.tenant, world.conversation
    put_document(tenant, conversation.session_id, "default", 0, {"mood": "calm"}, origin="api")
    last = world.messages[-1]
    add_alternative(tenant, last.id, content="Another reply.", status="complete")
    edit_message(tenant, world.messages[0].id, "src 0, edited", editor="operator")
    import_card(tenant, "mira.json", json.dumps(CARD).encode())
    agent_state.commit(
        conversation,
        world.scenario,
        expected_head=1,
        state="src: the second state",
        tools_called=["update_director_state"],
        source_turn=3,
        source_message_id=last.id,
        ledger_entries=[{"type": "fact", "key": "lamp", "payload": {"lit": True}}],
    )
    entry_ids = list(AgentLedgerEntry.objects.filter(tenant=tenant).values_list("pk", flat=True))
    run = PlanningRun.objects.get(tenant=tenant)
    run.snapshot = {**run.snapshot, "inputs": {"revision": 2, "entry_ids": entry_ids}}
    run.save(update_fields=["snapshot"])
    call = ModelCall.objects.create(
        tenant=tenant,
        config=world.model_config,
        purpose="consolidation",
        model="scripted-model",
        outcome="ok",
    )
    ConsolidationRun.objects.create(
        tenant=tenant,
        player=world.player,
        session_id=conversation.session_id,
        conversation_id=conversation.pk,
        status="done",
        model_call_ids=[call.pk],
        entry_ids=[str(world.entry.pk)],
        message_ids=[str(last.id)],
    )


def export_bytes(tenant) -> bytes:
    from console.backup.export import export_tenant

    out = io.BytesIO()
    export_tenant(tenant, out)
    return out.getvalue()


def add_indexes(tenancy) -> None:
    """Rows with vectors, a text-search vector and bytes: the conversation's recall index and
    the worldbook revision's search index (the offline hashing embedder)."""
    from console.embedding.choose import hashing_embedder
    from memory.recall.indexing import index_messages
    from worldbook.indexing import request_build, run_build
    from worldbook.models import Book

    world = tenancy.objects
    conversation = world.conversation
    index_messages(
        world.tenant, session_id=conversation.session_id, player_id=world.player.pk,
        character_id=str(world.character.pk), conversation_id=conversation.pk,
    )  # fmt: skip
    book = Book.objects.get(pk=tenancy.book_id)
    index, _ = request_build(world.tenant, book, tenancy.revision, embedder=hashing_embedder())
    run_build(index.pk, embedder=hashing_embedder())
