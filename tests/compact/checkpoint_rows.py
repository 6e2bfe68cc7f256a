"""Compact checkpoint rows for the API and console tests: a scenario with ``compact`` whose
compactor is the scripted model, six stored messages, and version 1 of a checkpoint over the
first four, saved through ``compact.services.checkpoints.save``."""

from __future__ import annotations

from memory import services as message_store
from roleplay.compact.engine import checkpoint as cp
from roleplay.compact.services import checkpoints as store
from roleplay.models import Scenario

TEXTS = [
    ("user", "FACT-A I hand Mira the brass key."),
    ("assistant", "Mira turns the key over. 'From the old archive?'"),
    ("user", "FACT-B Yes, from the archive under the harbour."),
    ("assistant", "She hangs it by the lamp."),
    ("user", "What now?"),
    ("assistant", "Now we wait for the tide."),
]
STRUCTURED = {
    "format": "structured_json",
    "canonical": ["The user gave Mira the brass key from the archive."],
    "interaction": ["Mira is curious."],
    "open_threads": ["What the key opens."],
}
PLAIN = {"format": "plain_text", "text": "The user gave Mira the brass key."}


def compact_scenario(conversation, model_config, **compact) -> Scenario:
    """A scenario with ``compact`` on (the scripted model as compactor) that the
    conversation runs."""
    scenario = Scenario.objects.create(
        tenant=conversation.tenant,
        name="compacting",
        compact={"enabled": True, "compactorModelConfigId": str(model_config.pk), **compact},
    )
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    return scenario


def said(conversation) -> list:
    return [
        message_store.save_message(
            conversation.tenant, conversation.session_id, role=role, content=text
        )
        for role, text in TEXTS
    ]


def save(conversation, scenario, messages, *, summary=STRUCTURED, expected=0, covered=4):
    """Version ``expected + 1`` over the first ``covered`` messages."""
    span = messages[:covered]
    checkpoint = cp.Checkpoint(
        version=expected + 1,
        summary=summary,
        first_id=str(span[0].id),
        last_id=str(span[-1].id),
        covered_count=len(span),
        fingerprint=cp.fingerprint(span),
        config_fingerprint="config-fp",
        chain=expected or None,
    )
    return store.save(
        conversation.tenant_id,
        conversation.pk,
        scenario.pk,
        checkpoint,
        expected=expected,
        audit={"compactor": "scripted", "turn_id": "t-1"},
    )
