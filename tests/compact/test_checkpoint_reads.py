"""The newest checkpoint's read on every Compact turn is one statement of its own
(``compact.services.checkpoints.newest``): pinned here to the queryset it stands for,
``compact.selectors.versions_of``, which the operator's reads and edits use."""

from __future__ import annotations

import uuid

import pytest

from roleplay.compact.selectors import versions_of
from roleplay.compact.services import checkpoints as store
from roleplay.models import CompactCheckpoint
from tests.compact.checkpoint_rows import STRUCTURED, compact_scenario, said, save

pytestmark = pytest.mark.django_db


def fields(row) -> dict:
    return {f.attname: getattr(row, f.attname) for f in CompactCheckpoint._meta.concrete_fields}


def test_the_newest_read_is_the_querysets(conversation, model_config):
    scenario = compact_scenario(conversation, model_config)
    assert store.newest(conversation.pk, scenario.pk) is None
    messages = said(conversation)
    save(conversation, scenario, messages)
    save(conversation, scenario, messages, expected=1, covered=6)
    store.invalidate(conversation.pk, scenario.pk, 2, "covered_content_changed")
    found = store.newest(conversation.pk, scenario.pk)
    assert found.version == 2 and found.status == "invalidated"
    assert fields(found) == fields(versions_of(conversation.pk, scenario.pk).first())
    assert found.summary == STRUCTURED and isinstance(found.audit, dict)
    assert store.newest(conversation.pk, uuid.uuid4()) is None
