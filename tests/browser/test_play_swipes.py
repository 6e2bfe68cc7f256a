"""Swipes on the play page in Chromium: the arrows and their counter on the last reply.

Swiping right past the last alternative asks for a new one (a ``regenerate`` turn), which
streams into the same bubble; left and right pick among the stored ones
(``select_alternative``), and the choice is what the server keeps. While the new
alternative is generated every write control is disabled and Stop stays; another tab on
the same conversation follows along from the socket's events alone.
"""

from __future__ import annotations

import re
import threading

import pytest
from playwright.sync_api import expect

from roleplay.llm.scripted_server import Reply
from tests.browser.play_support import PlayPage, save_history

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Where am I?"
FIRST = "At the lighthouse, on the northern cape."
SECOND = "In the keeper's kitchen; the kettle is on."
THIRD = "On the gallery, high above the rocks."


@pytest.fixture
def exchange(conversation):
    return save_history(conversation, ("user", QUESTION), ("assistant", FIRST))


def stored_reply(conversation):
    from memory.models import Message

    message = Message.objects.get(session_id=conversation.session_id, role="assistant")
    return message.content, message.selected_alternative, message.alternatives.count()


def test_swipe_right_generates_left_goes_back_and_the_choice_survives_reload(
    operator_user, conversation, exchange, llm, browser_page, login, orm
):
    llm.enqueue(Reply(content=SECOND, chunks=5, chunk_delay=0.05))
    play = PlayPage(browser_page, conversation).open(login)
    reply = play.reply
    reply_id = reply.get_attribute("data-id")
    expect(reply.locator(".swipe-count")).to_have_text("1/1")
    expect(reply.locator(".swipe-prev")).to_be_disabled()
    expect(reply.locator(".swipe-next")).to_have_attribute(
        "aria-label", "Generate a new alternative"
    )

    reply.locator(".swipe-next").click()  # past the last one: a new alternative
    expect(reply.locator(".text")).to_have_text(SECOND)
    play.wait_idle()
    expect(reply.locator(".swipe-count")).to_have_text("2/2")
    assert play.messages.count() == 2, "the new alternative got a bubble of its own"
    assert play.reply.get_attribute("data-id") == reply_id
    assert llm.requests[-1]["messages"][-1]["content"] == QUESTION

    reply.locator(".swipe-prev").click()
    expect(reply.locator(".text")).to_have_text(FIRST)
    expect(reply.locator(".swipe-count")).to_have_text("1/2")
    expect(reply.locator(".swipe-prev")).to_be_disabled()
    expect(reply.locator(".swipe-next")).to_have_attribute("aria-label", "Next alternative")
    assert orm(stored_reply, conversation) == (FIRST, 0, 2)

    play.reload()
    expect(play.reply.locator(".text")).to_have_text(FIRST)
    expect(play.reply.locator(".swipe-count")).to_have_text("1/2")

    play.reply.locator(".swipe-next").click()  # an existing one: no new turn
    expect(play.reply.locator(".text")).to_have_text(SECOND)
    expect(play.reply.locator(".swipe-count")).to_have_text("2/2")
    assert len(llm.requests) == 1
    assert play.error.is_hidden()
    assert play.problems() == []


def test_controls_are_disabled_while_a_turn_runs_and_stop_keeps_the_shown_reply(
    operator_user, conversation, exchange, llm, browser_page, login
):
    gate = threading.Event()

    def held(_request):
        gate.wait(30)
        return Reply(content=THIRD, chunks=3)

    llm.enqueue(Reply.from_callable(held), Reply.from_callable(held))
    play = PlayPage(browser_page, conversation).open(login)
    reply, question = play.reply, play.message(0)
    write_controls = [
        reply.locator(".swipe-prev"),
        reply.locator(".swipe-next"),
        reply.locator(".msg-continue"),
        reply.locator(".msg-edit"),
        reply.locator(".msg-delete"),
        question.locator(".msg-edit"),
        question.locator(".msg-delete"),
        play.page.locator("#send"),
    ]
    height = question.bounding_box()["height"]
    try:
        reply.locator(".swipe-next").click()
        expect(reply).to_have_class(re.compile(r"\bstreaming\b"))
        for control in write_controls:
            expect(control).to_be_disabled()
        expect(play.page.locator("#cancel")).to_be_visible()
        assert question.bounding_box()["height"] == height, "disabled controls moved the page"

        play.page.locator("#cancel").click()
        expect(play.page.locator("#play-status")).to_have_text("Stopped.")  # not an error
        expect(play.error).to_be_hidden()
        play.wait_idle()
        expect(reply.locator(".text")).to_have_text(FIRST)  # nothing came: the old text
        expect(reply.locator(".swipe-count")).to_have_text("1/1")
        expect(play.page.locator("#cancel")).to_be_hidden()
        for control in write_controls[1:]:  # back, except "previous" on the first one
            expect(control).to_be_enabled()

        gate.set()  # the next turn streams at once
        reply.locator(".swipe-next").click()
        expect(reply.locator(".text")).to_have_text(THIRD)
        play.wait_idle()
        expect(reply.locator(".swipe-count")).to_have_text("2/2")
        expect(play.error).to_be_hidden()
    finally:
        gate.set()
    assert play.problems() == []


def test_another_tab_follows_a_swipe_from_events(
    operator_user, conversation, exchange, llm, browser_page, login
):
    llm.enqueue(Reply(content=SECOND, chunks=4, chunk_delay=0.05))
    mine = PlayPage(browser_page, conversation).open(login)
    other = PlayPage(browser_page.context.new_page(), conversation).visit()

    mine.reply.locator(".swipe-next").click()
    expect(other.reply.locator(".text")).to_have_text(SECOND)
    expect(other.reply.locator(".swipe-count")).to_have_text("2/2")
    other.wait_idle()
    assert other.messages.count() == 2

    mine.wait_idle()
    mine.reply.locator(".swipe-prev").click()
    expect(other.reply.locator(".text")).to_have_text(FIRST)
    expect(other.reply.locator(".swipe-count")).to_have_text("1/2")
    assert mine.problems() == [] and other.problems() == []
