"""A reply's reasoning on the play page in a real browser: a closed "Thoughts" block above
the reply once it completes, opened on demand, shown as text (never markup), kept on
reload, and absent from a reply without reasoning."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from roleplay.llm.scripted_server import Reply
from tests.browser.play_support import PlayPage

pytestmark = pytest.mark.django_db(transaction=True)

THOUGHT = "She is wary: <b>keep</b> it short."


def test_the_reasoning_is_collapsed_above_the_reply_and_opens(
    operator_user, conversation, llm, browser_page, login
):
    llm.enqueue(
        Reply(content=f"<think>{THOUGHT}</think>\n\nSit by the fire.", chunks=5, chunk_delay=0.05),
        Reply(content="Good night."),
    )
    play = PlayPage(browser_page, conversation).open(login)
    page = play.page
    page.fill("#input", "Where am I?")
    page.click("#send")
    play.wait_idle()
    reply = play.message(1)
    expect(reply.locator(".text")).to_have_text("Sit by the fire.")
    thoughts = reply.locator("details.reasoning")
    expect(thoughts).to_be_visible()
    expect(thoughts).not_to_have_attribute("open", "")
    expect(thoughts.locator(".reasoning-text")).to_be_hidden()
    thoughts.locator("summary").click()
    expect(thoughts.locator(".reasoning-text")).to_be_visible()
    expect(thoughts.locator(".reasoning-text")).to_have_text(THOUGHT)  # escaped: no <b>
    assert thoughts.locator("b").count() == 0

    page.fill("#input", "And now?")
    page.click("#send")
    play.wait_idle()
    expect(play.message(3).locator(".text")).to_have_text("Good night.")
    expect(play.message(3).locator("details.reasoning")).to_be_hidden()

    play.reload()
    again = play.message(1).locator("details.reasoning")
    expect(again).to_be_visible()
    expect(again).not_to_have_attribute("open", "")
    again.locator("summary").click()
    expect(again.locator(".reasoning-text")).to_have_text(THOUGHT)
    expect(play.message(3).locator("details.reasoning")).to_be_hidden()
    assert play.problems() == []
