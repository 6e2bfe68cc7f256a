"""The chat page's message actions in Chromium: delete one message (and, still, a message
and all after it), swipe the card's openings on the first message and a reply's
alternatives with a finger, an explicit Regenerate, the "cut short, Continue?" hint when a
reply stopped at its token limit, and Stop as a normal outcome that does not move Send."""

from __future__ import annotations

import re
import threading

import pytest
from playwright.sync_api import expect

from roleplay.llm.scripted_server import Reply
from tests.browser.conftest import TIMEOUT_MS
from tests.browser.layout_support import PHONE, shoot
from tests.browser.play_support import PlayPage, save_history

pytestmark = pytest.mark.django_db(transaction=True)

# A finger moving `dx` pixels sideways across the element (Chromium's own touch events).
TOUCH_SWIPE = """(el, dx) => {
  const box = el.getBoundingClientRect();
  const x = box.left + box.width / 2, y = box.top + box.height / 2;
  const touch = (cx) => new Touch({identifier: 1, target: el, clientX: cx, clientY: y});
  el.dispatchEvent(new TouchEvent("touchstart",
    {touches: [touch(x)], changedTouches: [touch(x)], bubbles: true, cancelable: true}));
  el.dispatchEvent(new TouchEvent("touchend",
    {touches: [], changedTouches: [touch(x + dx)], bubbles: true, cancelable: true}));
}"""


def stored(conversation) -> list[str]:
    from memory.models import Message

    rows = Message.objects.filter(session_id=conversation.session_id).order_by("ts")
    return list(rows.values_list("content", flat=True))


@pytest.fixture
def three_exchanges(conversation):
    pairs = [("One", "Reply one"), ("Two", "Reply two"), ("Three", "Reply three")]
    return save_history(
        conversation, *[line for q, a in pairs for line in (("user", q), ("assistant", a))]
    )


def test_delete_one_reply_then_from_a_message_on(
    operator_user, conversation, three_exchanges, llm, browser_page, login, orm
):
    play = PlayPage(browser_page, conversation).open(login)
    middle = play.message(1)
    expect(play.reply.locator(".msg-delete-from")).to_be_hidden()  # nothing after the last
    middle.locator(".msg-delete").click()
    confirm = middle.locator(".msg-confirm")
    expect(confirm).to_contain_text("Delete this message?")
    confirm.locator(".confirm-yes").click()
    expect(play.messages).to_have_count(5)
    assert play.texts() == ["One", "Two", "Reply two", "Three", "Reply three"]
    assert orm(stored, conversation) == ["One", "Two", "Reply two", "Three", "Reply three"]

    play.message(2).locator(".msg-delete-from").click()
    confirm = play.message(2).locator(".msg-confirm")
    expect(confirm).to_contain_text("Delete this message and the 2 after it?")
    confirm.locator(".confirm-yes").click()
    expect(play.messages).to_have_count(2)
    play.reload()
    assert play.texts() == ["One", "Two"]
    assert play.problems() == []


@pytest.fixture
def greetings(character):
    character.alternate_greetings = ["*The lamp hisses.* Careful on the stairs.", "You again?"]
    character.save(update_fields=["alternate_greetings"])
    return character


@pytest.fixture
def touch_page(browser_page, live_server_url):
    """A page on a phone-sized screen that has touch."""
    context = browser_page.context.browser.new_context(
        base_url=live_server_url, viewport=PHONE, has_touch=True
    )
    context.set_default_timeout(TIMEOUT_MS)
    yield context.new_page()
    context.close()


def test_swipe_the_openings_before_the_first_message(
    operator_user, conversation, greetings, llm, touch_page, login, orm
):
    llm.enqueue(Reply(content="Then come in.", chunks=2))
    play = PlayPage(touch_page, conversation).open(login)
    opening = play.page.locator("#transcript li.opening")
    expect(opening.locator(".swipe-count")).to_have_text("1/3")
    expect(opening.locator(".swipe-prev")).to_be_disabled()
    opening.locator(".swipe-next").click()
    expect(opening.locator(".text em")).to_have_text("The lamp hisses.")
    expect(opening.locator(".swipe-count")).to_have_text("2/3")

    opening.evaluate(TOUCH_SWIPE, -120)  # finger to the left
    expect(opening.locator(".text")).to_have_text("You again?")
    expect(opening.locator(".swipe-count")).to_have_text("3/3")
    expect(opening.locator(".swipe-next")).to_be_disabled()
    opening.evaluate(TOUCH_SWIPE, 120)  # and back
    expect(opening.locator(".swipe-count")).to_have_text("2/3")
    shoot(play.page, "chat-opening-swipe-phone")

    def greeting_index():
        from roleplay.models import Conversation

        return Conversation.objects.get(pk=conversation.pk).greeting_index

    assert orm(greeting_index) == 1
    play.reload()
    expect(opening.locator(".swipe-count")).to_have_text("2/3")

    # Once the first message is sent the opening is fixed: no more arrows.
    play.page.fill("#input", "Hello?")
    play.page.click("#send")
    expect(opening.locator(".swipe")).to_be_hidden()
    play.wait_idle()
    assert llm.requests[-1]["messages"][-2]["content"].endswith("Careful on the stairs.")
    assert play.problems() == []


@pytest.fixture
def two_alternatives(conversation):
    from memory import alternatives

    rows = save_history(conversation, ("user", "Where am I?"), ("assistant", "At the lighthouse."))
    alternatives.add_alternative(
        conversation.tenant, rows[1].id, content="In the kitchen.", status="complete"
    )
    return rows


def test_a_finger_swipes_the_last_reply_and_regenerate_adds_one(
    operator_user, conversation, two_alternatives, llm, touch_page, login
):
    llm.enqueue(Reply(content="On the gallery.", chunks=3))
    play = PlayPage(touch_page, conversation).open(login)
    reply = play.reply
    expect(reply.locator(".swipe-count")).to_have_text("2/2")
    reply.evaluate(TOUCH_SWIPE, 120)  # previous
    expect(reply.locator(".text")).to_have_text("At the lighthouse.")
    expect(reply.locator(".swipe-count")).to_have_text("1/2")
    reply.evaluate(TOUCH_SWIPE, -30)  # too short: nothing
    reply.evaluate(TOUCH_SWIPE, -120)  # next
    expect(reply.locator(".swipe-count")).to_have_text("2/2")
    expect(reply.locator(".text")).to_have_text("In the kitchen.")

    reply.locator(".msg-regenerate").click()
    expect(reply.locator(".text")).to_have_text("On the gallery.")
    play.wait_idle()
    expect(reply.locator(".swipe-count")).to_have_text("3/3")
    assert play.problems() == []


def test_a_reply_cut_short_offers_continue(operator_user, conversation, llm, browser_page, login):
    llm.enqueue(Reply(content="The lamp is lit and the", chunks=3, finish_reason="length"))
    llm.enqueue(Reply(content=" kettle sings.", chunks=2))
    play = PlayPage(browser_page, conversation).open(login)
    play.page.fill("#input", "Tell me about the lighthouse.")
    play.page.click("#send")
    play.wait_idle()
    hint = play.reply.locator(".cut-short")
    expect(hint).to_be_visible()
    expect(hint).to_contain_text("cut short")
    play.reload()  # the page knows it from the stored turn too
    expect(hint).to_be_visible()
    shoot(play.page, "chat-cut-short-desktop")
    play.reply.locator(".msg-continue").click()
    expect(play.reply.locator(".text")).to_have_text("The lamp is lit and the kettle sings.")
    play.wait_idle()
    expect(hint).to_be_hidden()
    play.reload()
    expect(hint).to_be_hidden()
    assert play.problems() == []


def test_stop_is_a_normal_outcome_and_send_stays_in_place(
    operator_user, conversation, llm, browser_page, login
):
    gate = threading.Event()

    def held(_request):
        gate.wait(30)
        return Reply(content="never", chunks=1)

    llm.enqueue(Reply(content="The fog", chunks=1), Reply.from_callable(held))
    play = PlayPage(browser_page, conversation).open(login)
    page = play.page
    send = page.locator("#send")
    before = send.bounding_box()
    expect(page.locator("#cancel")).to_be_hidden()
    try:
        page.fill("#input", "Go on.")
        send.click()
        play.wait_idle()
        play.reply.locator(".msg-regenerate").click()
        expect(play.reply).to_have_class(re.compile(r"\bstreaming\b"))
        expect(page.locator("#cancel")).to_be_visible()
        assert send.bounding_box() == before, "Send moved when Stop appeared"
        page.locator("#cancel").click()
        expect(page.locator("#play-status")).to_have_text("Stopped.")
        expect(play.error).to_be_hidden()
        play.wait_idle()
        expect(page.locator("#cancel")).to_be_hidden()
        expect(play.reply.locator(".text")).to_have_text("The fog")
        assert send.bounding_box() == before
    finally:
        gate.set()
    assert play.problems() == []
