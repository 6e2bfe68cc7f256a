"""A rollback or an archive made outside the page (the REST API, a task: the message store
itself) shows on an open play page at once, through ``history.changed``, without a reload."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.play_support import PlayPage, save_history

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_rollback_elsewhere_shows_at_once(
    operator_user, conversation, llm, browser_page, login, orm
):
    from memory import services as message_store

    said = orm(
        save_history,
        conversation,
        ("user", "Open the gate."),
        ("assistant", "It creaks open."),
        ("user", "Walk through."),
        ("assistant", "The courtyard is empty."),
    )
    play = PlayPage(browser_page, conversation).open(login)
    expect(play.messages).to_have_count(4)
    orm(
        message_store.delete_messages_by_timestamps,
        conversation.tenant,
        conversation.session_id,
        [m.ts for m in said[2:]],
    )
    expect(play.messages).to_have_count(2)
    assert play.texts() == ["Open the gate.", "It creaks open."]
    assert play.problems() == []
