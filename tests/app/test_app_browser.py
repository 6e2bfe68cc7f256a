"""The player app in Chromium: sign in, search the library, start a chat, get a streamed
reply, swipe for another; then the same chat at a phone's 360 px width."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from roleplay.llm.scripted_server import Reply
from tests.browser import conftest as browser
from tests.browser.play_support import PlayPage, app_sign_in

# The browser tests' fixtures: a live daphne, a Chromium page, ORM calls beside it.
live_server_url = browser.live_server_url
browser_page = browser.browser_page
orm = browser.orm

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "pw-browser-123456"
FIRST = "The lamp is lit; the sea is calm tonight."
SECOND = "Fog rolls in from the cape; listen for the bell."


@pytest.fixture
def player_account(tenant, model_config):
    """A verified player of the tenant ``/app/`` serves (the only one: the oldest)."""
    from roleplay.accounts import services
    from roleplay.characters.services.characters import create_character

    create_character(
        tenant,
        name="Mira",
        description="A lighthouse keeper.",
        first_message="Welcome to the lighthouse.",
        tags=["lighthouse", "sea"],
        creator_notes="Keeps the northern light.",
        visibility="listed",
    )
    create_character(tenant, name="Bram", tags=["forest"], visibility="listed")
    create_character(tenant, name="Hidden", tags=["lighthouse"], visibility="private")
    return services.create_account(tenant, email="ann@example.com", password=PASSWORD)


def _conversation_of(account):
    from roleplay.models import Conversation

    return Conversation.objects.select_related("character").get(player=account.player)


def test_sign_in_search_start_a_chat_stream_and_swipe(player_account, llm, browser_page, orm):
    page = browser_page
    play = PlayPage(page, None)  # records CSP violations and script errors from the start
    app_sign_in(page, player_account.email, PASSWORD)
    assert page.url.endswith("/app/")

    page.click("#nav-library")
    page.fill("#q", "lighthouse")
    with page.expect_navigation():
        page.click("#search")
    cards = page.locator("#library .character-card .name")
    expect(cards).to_have_text(["Mira"])  # not Bram (no match), not Hidden (private)

    with page.expect_navigation():
        cards.first.click()
    expect(page.locator("#character-name")).to_have_text("Mira")
    with page.expect_navigation():
        page.click("#start")
    assert "/app/chats/" in page.url

    play.conversation = orm(_conversation_of, player_account)
    play.wait_connected()
    llm.enqueue(Reply(content=FIRST, chunks=6, chunk_delay=0.05))
    page.fill("#input", "Is the lamp lit?")
    page.click("#send")
    expect(play.reply.locator(".text")).to_have_text(FIRST)
    play.wait_idle()

    llm.enqueue(Reply(content=SECOND, chunks=4, chunk_delay=0.05))
    play.reply.locator(".swipe-next").click()
    expect(play.reply.locator(".text")).to_have_text(SECOND)
    play.wait_idle()
    expect(play.reply.locator(".swipe-count")).to_have_text("2/2")
    assert play.problems() == []

    page.set_viewport_size({"width": 360, "height": 740})
    play.reload()
    expect(play.reply.locator(".text")).to_have_text(SECOND)
    expect(page.locator("#send")).to_be_visible()
    overflow = page.evaluate("() => document.documentElement.scrollWidth")
    assert overflow <= 360, f"the page is {overflow} px wide at 360 px"
    play.reply.locator(".swipe-prev").click()
    expect(play.reply.locator(".text")).to_have_text(FIRST)

    page.goto("/app/chats/")
    expect(page.locator("#my-chats .chat-row")).to_have_count(1)
    expect(page.locator("#my-chats .chat-last")).to_contain_text(FIRST[:40])
    overflow = page.evaluate("() => document.documentElement.scrollWidth")
    assert overflow <= 360, f"My chats is {overflow} px wide at 360 px"
    assert play.problems() == []


def _group_of(account):
    """A group chat of the player: Mira (listed) and Jon (private: not in the library)."""
    from roleplay.characters.services.characters import create_character
    from roleplay.conversations.services.conversations import start_conversation
    from roleplay.groups.services import add_member
    from roleplay.models import Character

    mira = Character.objects.get(tenant=account.tenant, name="Mira")
    jon = create_character(account.tenant, name="Jon", visibility="private")
    group = start_conversation(
        account.tenant, character=mira, player=account.player, group_mode="list"
    )
    add_member(group, jon)
    return group, str(jon.pk)


def test_a_group_chat_in_the_app_shows_the_speakers_avatar(player_account, llm, browser_page, orm):
    page = browser_page
    play = PlayPage(page, None)
    group, jon = orm(_group_of, player_account)
    app_sign_in(page, player_account.email, PASSWORD)
    page.goto(f"/app/chats/{group.pk}/")
    play.conversation = group
    play.wait_connected()
    llm.enqueue(Reply(content=FIRST, chunks=4, chunk_delay=0.05))
    page.fill("#input", "/trigger Jon")
    page.click("#send")  # force-talk: Jon speaks
    expect(play.reply.locator(".text")).to_have_text(FIRST)
    expect(play.reply.locator(".who")).to_have_text("Jon")
    avatar = f"/app/chats/{group.pk}/members/{jon}/avatar/"
    expect(play.reply.locator("img.msg-avatar")).to_have_attribute("src", avatar)
    play.wait_idle()
    play.reload()
    expect(play.reply.locator("img.msg-avatar")).to_have_attribute("src", avatar)
    loaded = page.evaluate(
        "() => [...document.querySelectorAll('img.msg-avatar')].every(i => i.naturalWidth > 0)"
    )
    assert loaded and play.problems() == []
