"""Moderation as the people involved meet it, in Chromium: a player's message is flagged by
the tenant's word list (a warning: the turn goes on, and the page says so) and the player
reports a reply from the chat page; an operator sees both in the console's queue and
suspends the player from the flag; the player's open chat is closed at once and says why,
and the app refuses them."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from roleplay.llm.scripted_server import Reply
from tests.browser import conftest as browser
from tests.browser.play_support import PlayPage, app_sign_in

live_server_url = browser.live_server_url
browser_page = browser.browser_page
orm = browser.orm

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "pw-browser-123456"
OPERATOR = ("mod", "pw-mod-123456")


@pytest.fixture
def chat(tenant, model_config):
    """A player's chat with a listed character, and an operator of the same tenant."""
    from console.services import ensure_console_user
    from roleplay.accounts import services
    from roleplay.characters.services.characters import create_character
    from roleplay.conversations.services.conversations import start_conversation
    from roleplay.moderation.services import set_policy

    ensure_console_user(tenant, *OPERATOR, "operator")
    rules = {"categories": {"harassment": {"action": "warn", "keywords": ["stupid"]}}}
    set_policy(tenant, enabled=True, rules=rules)
    mira = create_character(tenant, name="Mira", first_message="Welcome.", visibility="listed")
    account = services.create_account(tenant, email="ann@example.com", password=PASSWORD)
    return account, start_conversation(tenant, player=account.player, character=mira)


def test_a_report_leads_to_a_suspension_that_closes_the_open_chat(chat, llm, browser_page):
    account, conversation = chat
    page = browser_page
    play = PlayPage(page, conversation)
    app_sign_in(page, account.email, PASSWORD)
    page.goto(f"/app/chats/{conversation.id}/")
    play.wait_connected()
    llm.enqueue(Reply(content="Something rude, stored.", chunks=3))
    page.fill("#input", "Hello, stupid lamp?")
    page.click("#send")
    expect(play.reply.locator(".text")).to_have_text("Something rude, stored.")
    # The warning the policy gave the message is shown, and stays once the reply is in.
    expect(page.locator("#play-status")).to_contain_text("moderation flagged it (harassment)")
    play.wait_idle()

    play.reload()  # the stored reply, with its Report button
    play.reply.locator("details.report summary").click()
    play.reply.locator("details.report input[name='reason']").fill("rude reply")
    with page.expect_navigation():
        play.reply.locator("details.report button[type='submit']").click()

    operator = page.context.browser.new_context(base_url=page.url.split("/app/")[0])
    console = operator.new_page()
    browser.login_as(console, *OPERATOR, "/console/moderation/")
    expect(console.locator("#cases tbody tr")).to_have_count(2)  # the report and the flag
    expect(console.locator("#cases")).to_contain_text("rude reply")
    flag = console.locator("#cases tbody tr", has_text="harassment")
    with console.expect_navigation():
        flag.locator("a", has_text="Open").click()

    page.goto(f"/app/chats/{conversation.id}/")  # the player is back in the chat
    play.wait_connected()
    console.select_option("#act-form select[name='action']", "suspend")
    console.fill("#act-form [name='reason']", "rude to the keeper")
    console.fill("#act-form [name='hours']", "24")
    with console.expect_navigation():
        console.click("#act-form button[type='submit']")
    print("AFTER ACT", console.url, console.locator("main").inner_text()[:1500])
    operator.close()

    expect(page.locator("#play-error")).to_contain_text("suspended")
    page.wait_for_function("() => document.getElementById('play').dataset.closed === '4423'")
    page.goto("/app/")
    expect(page.locator("#blocked")).to_contain_text("rude to the keeper")
