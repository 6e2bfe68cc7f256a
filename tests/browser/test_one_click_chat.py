"""Getting to a chat in Chromium: "Chat" on a character (or on the dashboard's
getting-started list) lands on the chat page of a new conversation with the defaults; the
"Chat as" picker and the New conversation form's pickers have a search box that narrows
hundreds of same-named items down, each option saying which one it is."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.layout_support import PHONE, shoot
from tests.browser.play_support import OPERATOR
from tests.security.test_csp_browser import RECORD_VIOLATIONS, violations

pytestmark = pytest.mark.django_db(transaction=True)


def conversations_of(character_id) -> list[tuple[str, str]]:
    from roleplay.models import Conversation

    rows = Conversation.objects.filter(character_id=character_id).order_by("created_at")
    return [(str(c.pk), c.player.external_id) for c in rows.select_related("player")]


@pytest.fixture
def watched(browser_page):
    console: list[str] = []
    browser_page.add_init_script(RECORD_VIOLATIONS)
    browser_page.on("console", lambda message: console.append(message.text))
    return console


@pytest.fixture
def more_players(tenant, player):
    from console.models import Player

    rows = [Player(tenant=tenant, external_id=f"guest-{i}") for i in range(8)]
    return Player.objects.bulk_create(rows)


def test_chat_on_the_dashboard_and_on_a_character_lands_on_the_chat_page(
    operator_user, character, player, more_players, llm, browser_page, watched, login, orm
):
    page = browser_page
    page.set_viewport_size(PHONE)
    login(page, *OPERATOR)
    steps = page.locator("#getting-started")
    expect(steps.get_by_role("link", name="Import a card")).to_be_visible()
    shoot(page, "dashboard-getting-started-phone")
    with page.expect_navigation():
        steps.get_by_role("button", name="Chat").click()
    [(first, who)] = orm(conversations_of, character.pk)
    assert page.url.endswith(f"/play/{first}/") and who == "console:op"
    page.wait_for_function("() => document.getElementById('play').dataset.connected === '1'")
    expect(page.locator("#transcript li.opening .text")).to_have_text("Welcome.")
    expect(page.locator("#input")).to_be_visible()

    # The character's page: chat as another player, found by searching the picker.
    page.goto(f"/console/characters/{character.pk}/")
    picker = page.locator(".chat-form select[name=player]")
    search = page.locator(".chat-form .picker-search")
    search.fill("p-1")
    expect(picker.locator("option:not([hidden])")).to_have_text(["Me", "Ann (p-1)"])
    search.press("Enter")
    expect(picker).to_have_value(str(player.pk))
    with page.expect_navigation():
        page.locator(".chat-form").get_by_role("button", name="Chat").click()
    second = orm(conversations_of, character.pk)[1]
    assert page.url.endswith(f"/play/{second[0]}/") and second[1] == "p-1"
    assert violations(page, watched) == []


@pytest.fixture
def many_lias(tenant):
    from roleplay.models import Character

    rows = [Character(tenant=tenant, name="Lia", creator=f"maker{i}") for i in range(24)]
    return Character.objects.bulk_create(rows)


def test_the_new_conversation_pickers_search_same_named_characters(
    operator_user, many_lias, llm, browser_page, watched, login
):
    page = browser_page
    login(page, *OPERATOR, next_path="/console/conversations/new/")
    select = page.locator("select[name=character]")
    options = select.locator("option:not([hidden])")
    expect(options).to_have_count(25)  # the empty choice and 24 "Lia"s
    search = page.locator("#conversation-fields .picker-search").first
    search.fill("maker17")
    expect(options).to_have_count(2)
    expect(options.nth(1)).to_contain_text("Lia · by maker17 · ")
    expect(page.locator(".picker-count").first).to_have_text("1 of 24")
    search.press("Enter")  # picks it; the form asks for its openings again (htmx)
    chosen = str(many_lias[17].pk)
    expect(page.locator("select[name=character]")).to_have_value(chosen)
    # The character picker keeps its search box; the short ones have none.
    expect(page.locator("#conversation-fields .picker-search")).to_have_count(1)
    shoot(page, "new-conversation-pickers-desktop")
    assert violations(page, watched) == []
