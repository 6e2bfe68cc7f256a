"""Continue, Edit and Delete on the play page in Chromium, and what a viewer sees.

Each control sends one socket frame (docs/websocket.md) and the page changes when the
server's event comes back; every test reloads to show the change was stored, not only
drawn, and checks that no CSP violation or script error happened on the way.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from roleplay.llm.scripted_server import Reply
from tests.browser.play_support import VIEWER, PlayPage, save_history

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Where am I?"
ANSWER = "At the lighthouse."


def stored(conversation) -> list[tuple[str, str, bool]]:
    from memory.models import Message

    rows = Message.objects.filter(session_id=conversation.session_id).order_by("ts")
    return list(rows.values_list("role", "content", "edited"))


@pytest.fixture
def exchange(conversation):
    return save_history(conversation, ("user", QUESTION), ("assistant", ANSWER))


def test_continue_grows_the_last_reply(
    operator_user, conversation, exchange, llm, browser_page, login, orm
):
    more = " The lamp turns slowly above us."
    llm.enqueue(Reply(content=more, chunks=4, chunk_delay=0.05))
    play = PlayPage(browser_page, conversation).open(login)
    expect(play.message(0).locator(".msg-continue")).to_be_hidden()  # only on the last reply

    play.reply.locator(".msg-continue").click()
    expect(play.reply.locator(".text")).to_have_text(ANSWER + more)
    play.wait_idle()
    assert play.messages.count() == 2, "the continuation got a bubble of its own"
    expect(play.reply.locator(".swipe-count")).to_have_text("1/1")  # same alternative, longer
    assert orm(stored, conversation)[-1] == ("assistant", ANSWER + more, False)

    play.reload()
    expect(play.reply.locator(".text")).to_have_text(ANSWER + more)
    assert play.problems() == []


def test_edit_saves_marks_edited_and_save_and_regenerate_answers_again(
    operator_user, conversation, exchange, llm, browser_page, login, orm
):
    fixed = "At the old lighthouse,\nby the sea."
    question = "Which way to the harbour?"
    new_answer = "Down the cliff path, past the nets."
    llm.enqueue(Reply(content=new_answer, chunks=4))
    play = PlayPage(browser_page, conversation).open(login)
    reply = play.reply
    expect(reply.locator(".edited-mark")).to_be_hidden()

    reply.locator(".msg-edit").click()
    editor = reply.locator(".msg-editor textarea")
    expect(editor).to_be_focused()
    expect(editor).to_have_value(ANSWER)
    editor.fill("not this")
    editor.press("Escape")  # Cancel from the keyboard: nothing sent
    expect(reply.locator(".msg-editor")).to_have_count(0)
    expect(reply.locator(".text")).to_have_text(ANSWER)

    reply.locator(".msg-edit").click()
    reply.locator(".msg-editor textarea").fill(fixed)
    reply.get_by_role("button", name="Save", exact=True).click()
    expect(reply.locator(".msg-editor")).to_have_count(0)
    expect(reply.locator(".text")).to_have_text(fixed)
    expect(reply.locator(".edited-mark")).to_be_visible()
    assert orm(stored, conversation)[-1] == ("assistant", fixed, True)

    play.reload()
    reply = play.reply
    expect(reply.locator(".text")).to_have_text(fixed)
    expect(reply.locator(".edited-mark")).to_be_visible()

    first = play.message(0)
    first.locator(".msg-edit").click()
    first.locator(".msg-editor textarea").fill(question)
    first.get_by_role("button", name="Save and regenerate").click()
    expect(first.locator(".text")).to_have_text(question)
    expect(first.locator(".edited-mark")).to_be_visible()
    expect(reply.locator(".text")).to_have_text(new_answer)
    play.wait_idle()
    expect(reply.locator(".swipe-count")).to_have_text("2/2")
    assert llm.requests[-1]["messages"][-1]["content"] == question
    assert play.messages.count() == 2

    play.reload()
    assert play.texts() == [question, new_answer]
    expect(play.message(0).locator(".edited-mark")).to_be_visible()
    assert play.error.is_hidden()
    assert play.problems() == []


@pytest.fixture
def three_exchanges(conversation):
    pairs = [("One", "Reply one"), ("Two", "Reply two"), ("Three", "Reply three")]
    lines = [line for q, a in pairs for line in (("user", q), ("assistant", a))]
    return save_history(conversation, *lines)


def test_delete_a_message_and_from_a_message_on(
    operator_user, conversation, three_exchanges, llm, browser_page, login, orm
):
    play = PlayPage(browser_page, conversation).open(login)
    expect(play.reply.locator(".msg-delete")).to_have_text("Delete")
    expect(play.reply.locator(".msg-delete-from")).to_be_hidden()  # nothing after the last
    expect(play.message(1).locator(".msg-delete-from")).to_have_text("Delete from here")

    play.reply.locator(".msg-delete").click()
    confirm = play.reply.locator(".msg-confirm")
    expect(confirm).to_contain_text("Delete this message?")
    expect(confirm.locator(".confirm-no")).to_be_focused()
    confirm.locator(".confirm-no").click()  # Keep
    expect(confirm).to_have_count(0)
    assert play.messages.count() == 6

    play.reply.locator(".msg-delete").click()  # the reply alone, not its question
    play.reply.locator(".msg-confirm .confirm-yes").click()
    expect(play.messages).to_have_count(5)
    assert play.texts() == ["One", "Reply one", "Two", "Reply two", "Three"]

    play.message(1).locator(".msg-delete-from").click()
    confirm = play.message(1).locator(".msg-confirm")
    expect(confirm).to_contain_text("Delete this message and the 3 after it?")
    confirm.locator(".confirm-yes").click()
    expect(play.messages).to_have_count(1)
    assert play.texts() == ["One"]
    expect(play.message(0).locator(".msg-delete")).to_have_text("Delete")
    expect(play.message(0).locator(".swipe")).to_be_hidden()

    play.reload()
    assert play.texts() == ["One"]
    assert orm(stored, conversation) == [("user", "One", False)]
    assert play.problems() == []


def test_a_refused_change_is_shown_and_the_page_catches_up(
    operator_user, conversation, exchange, llm, browser_page, login, orm
):
    play = PlayPage(browser_page, conversation).open(login)
    reply = play.reply
    reply.locator(".msg-edit").click()
    reply.locator(".msg-editor textarea").fill("Too late.")

    def forget_the_reply():  # gone without an event, as when the socket was down
        from memory.models import Message

        Message.objects.filter(pk=exchange[1].pk).delete()

    orm(forget_the_reply)
    reply.get_by_role("button", name="Save", exact=True).click()
    expect(play.error).to_contain_text("message_not_found")
    expect(play.messages).to_have_count(1)  # read again from the server
    assert play.texts() == [QUESTION]
    expect(play.message(0).locator(".msg-delete")).to_be_enabled()
    assert play.problems() == []


@pytest.fixture
def viewer(tenant):
    from console.services import ensure_console_user

    return ensure_console_user(tenant, *VIEWER, "viewer")[0]


@pytest.fixture
def swiped(exchange, conversation):
    """The reply has a second alternative, shown."""
    from memory import alternatives

    alternatives.add_alternative(
        conversation.tenant, exchange[1].id, content="A second answer.", status="complete"
    )


def test_viewer_sees_counters_but_no_write_controls_and_follows_api_changes(
    viewer, conversation, exchange, swiped, api, llm, browser_page, login, orm
):
    play = PlayPage(browser_page, conversation).open(login, VIEWER)
    expect(play.reply.locator(".text")).to_have_text("A second answer.")
    expect(play.reply.locator(".swipe-count")).to_have_text("2/2")
    # Copy is the one button a viewer has: it changes nothing.
    controls = "#transcript button:not(.msg-copy), #editor-template, #confirm-template"
    expect(play.page.locator(controls)).to_have_count(0)
    expect(play.reply.locator(".msg-copy")).to_be_visible()
    expect(play.page.locator("#send")).to_be_disabled()
    expect(play.page.locator("#input")).to_be_disabled()

    # A change made elsewhere (the REST API) reaches the watching page as events.
    def select_first():
        path = f"/api/v1/conversations/{conversation.id}/messages/{exchange[1].id}"
        response = api.post(path + "/select-alternative", {"index": 0}, format="json")
        assert response.status_code == 200, response.content
        response = api.patch(f"{path}", {"content": "Edited by the API."}, format="json")
        assert response.status_code == 200, response.content

    orm(select_first)
    expect(play.reply.locator(".text")).to_have_text("Edited by the API.")
    expect(play.reply.locator(".swipe-count")).to_have_text("1/2")
    expect(play.reply.locator(".edited-mark")).to_be_visible()
    assert play.problems() == []
