"""``console.history``: the port through which story reads the message store and hears its
changes without importing memory (capabilities share only the kernel)."""

from __future__ import annotations

import uuid

import pytest

from console import history
from memory import selectors, services, signals
from story import selectors as story_selectors


def test_memory_sends_the_kernels_history_signal():
    assert signals.history_changed is history.history_changed


def test_the_message_store_provides_the_reader_at_start_up():
    assert history._reader == [selectors.message_texts]


def test_without_a_message_store_reading_the_history_is_refused(monkeypatch):
    monkeypatch.setattr(history, "_reader", [])
    with pytest.raises(LookupError):
        history.message_texts(str(uuid.uuid4()), [str(uuid.uuid4())])


@pytest.mark.django_db
def test_story_reads_the_texts_of_the_conversations_messages(tenant):
    session = str(uuid.uuid4())
    said = services.save_message(tenant, session, role="user", content="the key is brass")
    elsewhere = services.save_message(tenant, str(uuid.uuid4()), role="user", content="other")
    wanted = [str(said.pk), str(elsewhere.pk), "not-an-id"]
    assert story_selectors.message_texts(session, wanted) == {str(said.pk): "the key is brass"}
    assert story_selectors.message_texts(session, ["not-an-id"]) == {}
