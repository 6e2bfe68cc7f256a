"""Seed 003: every memory write is scrubbed, whatever its door. A corpus of secrets goes in
through every path that writes memory (REST, console, the local rules of a chat turn,
evidence, documents, held document changes, handoffs), and then every text column of the
memory tables is read back and searched for the raw strings: none may be there.

The second test keeps that true for fields added later: each text or JSON field of the
memory model is classified here, scrubbed by its service or holding no user text; a new one
fails until someone decides which it is (and, if it holds text, writes it through the
scrubbing service)."""

from __future__ import annotations

import json
import uuid

import pytest
from django.apps import apps
from django.db import models
from django.test import Client

from memory import services as store
from memory.documents import proposals
from memory.entries import evidence
from memory.entries.services import add_entry
from memory.models import MemoryEntry, Message
from tests.memory.test_scrub import SECRETS

pytestmark = pytest.mark.django_db(transaction=True)

RAW = [raw for _text, raw, _kind in SECRETS]
TEXTS = [text for text, _raw, _kind in SECRETS]

# Memory fields that hold text a person or a model wrote: scrubbed by their write service.
SCRUBBED = {
    "MemoryEntry.content",
    "MemoryEntry.tags",
    "MemoryEvidence.quote",
    "MemoryDocument.data",
    "MemoryDocumentRevision.data",
    "MemoryHandoff.summary",
    "MemoryProposal.data",
    "MemoryJob.payload",  # a learn's entry, scrubbed at admission (``memory.jobs``)
    "ConsolidationRun.detail",  # a refusal's reason, may quote the model: scrubbed
}
# Text fields that hold no user text: ids, enums, hashes, names checked against a pattern.
NOT_TEXT = {
    "MemoryEntry.character_id", "MemoryEntry.session_id", "MemoryEntry.kind",
    "MemoryEntry.scope", "MemoryEntry.category_key", "MemoryEntry.status",
    "MemoryEntry.origin", "MemoryEntry.content_hash", "MemoryEvidence.role",
    "MemoryDocument.session_id", "MemoryDocument.slot", "MemoryDocumentRevision.origin",
    "MemoryHandoff.from_character_id", "MemoryHandoff.to_character_id",
    "MemoryHandoff.session_id", "MemoryHandoff.status",
    "MemoryProposal.session_id", "MemoryProposal.slot", "MemoryProposal.status",
    "MemoryProposal.reason",
    "MemorySettings.character_id", "MemorySettings.data",  # an operator's settings
    "MemoryJob.kind", "MemoryJob.status", "MemoryJob.error_code",
    "MemoryJob.error", "MemoryJob.result",  # our own codes and messages, ids and counts
    "DiaryRun.session_id", "DiaryRun.status", "DiaryRun.error_code",
    "ConsolidationCursor.session_id", "ConsolidationCursor.character_id",
    "ConsolidationRun.session_id", "ConsolidationRun.status", "ConsolidationRun.error_code",
    "ConsolidationRun.message_ids", "ConsolidationRun.entry_ids",
    "ConsolidationRun.model_call_ids",
    "MemoryClaim.character_id", "MemoryClaim.session_id", "MemoryClaim.request_id",
    "MemoryClaim.scene_id", "MemoryClaim.model_config_id", "MemoryClaim.prompt_id",
    "MemoryClaim.status", "MemoryClaim.commit_digest",
    "BeliefBuild.status", "BeliefBuild.error_code",
    "RecallOwnerIndex.embedder", "RecallOwnerIndex.name",  # an embedder's version, our name
    "SessionFork.session_id", "SessionFork.ancestors",  # session ids and timestamps
}  # fmt: skip
# The transcript and its side store (seed 001) keep what was said, as said: they are the
# conversation, not memory learned from it, and forgetting deletes them (``memory.forget``).
# The recall index holds the transcript's own text, chunked, and goes with it (the message
# store's ``messages_deleted``); its term statistics hold the transcript's words, and a
# word no indexed message holds any more leaves them (``memory.RecallTerm``).
TRANSCRIPT = {
    "Message", "MessageAlternative", "MessageEdit", "MemoryMetadata", "RecallItem", "RecallTerm"
}  # fmt: skip


def _memory_text_fields():
    for model in apps.get_app_config("memory").get_models():
        if model.__name__ in TRANSCRIPT:
            continue
        for field in model._meta.concrete_fields:
            if isinstance(field, models.CharField | models.TextField | models.JSONField):
                yield model, field


def test_every_memory_text_field_is_classified():
    unclassified = [
        f"{model.__name__}.{field.name}"
        for model, field in _memory_text_fields()
        if f"{model.__name__}.{field.name}" not in SCRUBBED | NOT_TEXT
    ]
    assert not unclassified, (
        f"new memory fields {unclassified}: write them through a service that scrubs "
        "(memory.engine.scrub) and list them in SCRUBBED, or list them in NOT_TEXT"
    )


def _stored_memory_text() -> str:
    """Every scrubbed column of every memory row, as one text."""
    out = []
    for model, field in _memory_text_fields():
        if f"{model.__name__}.{field.name}" in SCRUBBED:
            for value in model.objects.values_list(field.name, flat=True):
                out.append(
                    value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                )
    return "\n".join(out)


def test_no_door_stores_a_raw_secret(
    api, tenant, player, character, conversation, operator_user, llm
):
    corpus = "\n".join(TEXTS)
    doors = 0
    # REST: an entry created, then its text changed.
    created = api.post(
        f"/api/v1/players/{player.pk}/memory/entries/",
        {"kind": "fact", "scope": "shared", "content": corpus[:4000], "tags": [RAW[9]]},
        format="json",
    )
    assert created.status_code == 201, created.content
    changed = api.patch(
        f"/api/v1/players/{player.pk}/memory/entries/{created.json()['id']}/",
        {"version": 1, "content": "\n".join(reversed(TEXTS))[:4000]},
        format="json",
    )
    assert changed.status_code == 200, changed.content
    doors += 2
    # REST: a learn, held in the job outbox until a worker delivers it.
    learned_job = api.post(
        f"/api/v1/players/{player.pk}/memory/learn",
        {"content": corpus[:4000], "tags": [RAW[9]]},
        format="json",
    )
    assert learned_job.status_code == 202, learned_job.content
    doors += 1
    # REST: a document, secrets in nested values.
    document = api.put(
        f"/api/v1/conversations/{conversation.pk}/memory-documents/default/",
        {"expectedRevision": 0, "memory": {"notes": TEXTS, "deep": {"k": corpus}}},
        format="json",
    )
    assert document.status_code == 200, document.content
    doors += 1
    # Console: the document's next revision.
    console = Client()
    console.force_login(operator_user)
    saved = console.post(
        f"/console/conversations/{conversation.pk}/memory/default/",
        {"memory": json.dumps({"console": corpus}), "expected_revision": "1"},
    )
    assert saved.status_code == 302, saved.content[:500]
    doors += 1
    # REST: a handoff's summary.
    handoff = api.post(
        f"/api/v1/players/{player.pk}/memory/handoffs/",
        {
            "from_character": "earlier",
            "to_character": str(character.pk),
            "conversation": str(conversation.pk),
            "summary": corpus[:2000],
        },
        format="json",
    )
    assert handoff.status_code == 201, handoff.content
    doors += 1
    # A chat turn: the local rules learn from the player's words, quoting them as evidence.
    said = f"From now on call me {RAW[9]} please, and be brief. {corpus}"
    turn = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": "m1", "content": said},
        format="json",
    )
    assert turn.status_code == 201, turn.content
    learned = MemoryEntry.objects.filter(origin="rule")
    assert learned.exists() and all(e.evidence.exists() for e in learned)
    doors += 1
    # Evidence of any span of a message.
    message = store.save_message(tenant, conversation.session_id, role="user", content=corpus)
    entry = add_entry(tenant, player, kind="fact", scope="shared", content="The user shared keys.")
    for text in TEXTS:
        start = corpus.index(text)
        evidence.attach(tenant, entry, message, start, start + len(text))
    doors += 1
    # A document change held for the turn's acceptance (``document_commit: on_accept``).
    gate = proposals.Gate(uuid.uuid4(), uuid.uuid4())
    proposals.propose(tenant, conversation.session_id, "held", gate, 0, {"notes": TEXTS})
    doors += 1

    stored = _stored_memory_text()
    assert "[redacted:" in stored
    leaked = [raw for raw in RAW if raw in stored]
    assert not leaked, f"raw secrets stored in memory: {leaked}"
    assert doors == 9
    # The transcript keeps what was said: it is the conversation (see TRANSCRIPT).
    assert Message.objects.filter(content__contains=RAW[0]).exists()
