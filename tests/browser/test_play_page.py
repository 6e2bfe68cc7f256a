"""The play page in a real browser: log in, send a message, watch the reply stream in.

Runs the whole path a player uses: Django login form, the server-rendered play page,
``static/js/play.js`` over a real WebSocket to daphne, the Redis channel layer, the turn
runtime and the scripted OpenAI-compatible model over HTTP.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from roleplay.llm.scripted_server import Reply
from tests.browser.play_support import PlayPage

pytestmark = pytest.mark.django_db(transaction=True)

REPLY = "The lamp is lit, traveller. Sit by the fire and tell me where the road led you."
CHUNKS = 6

# Records every text the newest assistant bubble showed, one entry per DOM change, so the
# test can tell a streamed reply (growing prefixes) from one that arrived whole.
WATCH_ASSISTANT = """() => {
  window.__assistantTexts = [];
  const transcript = document.getElementById("transcript");
  new MutationObserver(() => {
    const bubbles = transcript.querySelectorAll("li.msg.assistant:not(.opening) .text");
    const last = bubbles[bubbles.length - 1];
    if (last) window.__assistantTexts.push(last.textContent);
  }).observe(transcript, {subtree: true, childList: true, characterData: true});
}"""


def test_message_streams_into_transcript_and_survives_reload(
    operator_user, conversation, llm, browser_page, login, orm
):
    llm.enqueue(Reply(content=REPLY, chunks=CHUNKS, chunk_delay=0.08))
    play = PlayPage(browser_page, conversation).open(login)
    page = play.page
    transcript = page.locator("#transcript")
    assert transcript.locator("li.opening .text").inner_text() == "Welcome."
    assert page.locator(".badge.demo").count() == 0

    page.evaluate(WATCH_ASSISTANT)
    page.fill("#input", "Where am I?")
    page.click("#send")

    user_bubble = transcript.locator("li.msg.user .text")
    assert user_bubble.last.inner_text() == "Where am I?"
    assistant = transcript.locator("li.msg.assistant:not(.opening)").last
    assistant.locator(".text").filter(has_text=REPLY).wait_for()
    page.wait_for_function(
        "() => !document.querySelector('#transcript li.msg.assistant.streaming')"
    )
    assert page.locator("#play-error").is_hidden()
    # The sent bubble took its stored id from turn.started: its controls work at once.
    expect(transcript.locator("li.msg.user .msg-edit")).to_be_visible()
    expect(assistant.locator(".swipe-count")).to_have_text("1/1")

    seen = page.evaluate("window.__assistantTexts")
    growing = [text for text in dict.fromkeys(seen) if text]
    assert growing[-1] == REPLY
    partial = [text for text in growing if text != REPLY]
    assert partial, "the reply arrived in one piece instead of streaming"
    assert all(REPLY.startswith(text) for text in partial)

    # The turn is stored: a reload renders both messages from the server's history.
    page.reload()
    rows = page.locator("#transcript li.msg:not(.opening)")
    rows.nth(1).wait_for()
    assert rows.count() == 2
    assert "user" in rows.nth(0).get_attribute("class")
    assert rows.nth(0).locator(".text").inner_text() == "Where am I?"
    assert "assistant" in rows.nth(1).get_attribute("class")
    assert rows.nth(1).locator(".text").inner_text() == REPLY

    def stored():
        from memory.models import Message

        return list(
            Message.objects.filter(session_id=str(conversation.id))
            .order_by("ts")
            .values_list("role", "content", "status")
        )

    assert orm(stored) == [
        ("user", "Where am I?", "complete"),
        ("assistant", REPLY, "complete"),
    ]
    assert [r["messages"][-1]["content"] for r in llm.requests] == ["Where am I?"]
    assert play.problems() == []


@pytest.fixture
def demo_config(model_config):
    """The conversation's model config flagged as the bundled demo model (before the
    browser starts: no ORM calls while a page is open)."""
    model_config.is_demo = True
    model_config.save(update_fields=["is_demo"])
    return model_config


def test_demo_model_badge(operator_user, conversation, demo_config, browser_page, login):
    page = PlayPage(browser_page, conversation).open(login).page
    badge = page.locator(".badge.demo")
    assert badge.is_visible()
    assert "Demo model" in badge.inner_text()
    assert demo_config.name in badge.inner_text()


def test_another_tab_shows_the_message_and_the_reply(
    operator_user, conversation, llm, browser_page, login
):
    llm.enqueue(Reply(content=REPLY, chunks=CHUNKS))
    mine = PlayPage(browser_page, conversation).open(login)
    other = PlayPage(browser_page.context.new_page(), conversation).visit()

    mine.page.fill("#input", "Is anyone there?")
    mine.page.click("#send")
    # The socket's events do not carry the player's text: the other tab reads it back.
    expect(other.messages.locator(".text")).to_have_text(["Is anyone there?", REPLY])
    other.wait_idle()
    expect(other.message(0).locator(".msg-edit")).to_be_visible()
    assert mine.problems() == [] and other.problems() == []
