"""A display-only regex script on the chat page, in Chromium: the message shows the script's
version (rendered as Markdown), while the editor works on the stored text."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from roleplay.llm.scripted_server import Reply
from roleplay.regex_scripts.services import create_script, set_allowed
from tests.browser.play_support import PlayPage, save_history

pytestmark = pytest.mark.django_db(transaction=True)

STORED = "The keeper lights the lamp."


@pytest.fixture
def scripted_history(conversation, character):
    """A display-only script on the character (allowed) and a reply it changes; set up before
    the browser starts (its event loop keeps the test body from the database)."""
    create_script(conversation.tenant, scope="character", character=character, script={
        "scriptName": "bold keeper", "findRegex": "/keeper/g", "replaceString": "**KEEPER**",
        "placement": [2], "markdownOnly": True})  # fmt: skip
    set_allowed(character, True)
    return save_history(conversation, ("user", "Hello."), ("assistant", STORED))


def test_display_only_scripts_change_what_is_shown_not_what_is_edited(
    operator_user, conversation, scripted_history, llm, browser_page, login
):
    play = PlayPage(browser_page, conversation).open(login)
    text = play.reply.locator(".text")
    expect(text.locator("strong")).to_have_text("KEEPER")
    expect(text).to_have_text("The KEEPER lights the lamp.")
    play.reply.locator(".msg-edit").click()
    expect(play.reply.locator(".msg-editor textarea")).to_have_value(STORED)
    play.reply.locator(".msg-editor textarea").press("Escape")
    assert play.problems() == []


def test_a_streamed_reply_shows_the_display_version_once_it_completes(
    operator_user, conversation, scripted_history, llm, browser_page, login
):
    llm.enqueue(Reply(content="The keeper waves.", chunks=2))
    play = PlayPage(browser_page, conversation).open(login)
    play.page.fill("#input", "Wave?")
    play.page.click("#send")
    play.wait_idle()
    text = play.reply.locator(".text")
    expect(text).to_have_text("The KEEPER waves.")
    expect(text.locator("strong")).to_have_text("KEEPER")
    play.reply.locator(".msg-edit").click()  # the editor still has the stored text
    expect(play.reply.locator(".msg-editor textarea")).to_have_value("The keeper waves.")
    play.reply.locator(".msg-editor textarea").press("Escape")
    assert play.problems() == []
