"""The chat page and the console at a laptop's size (1280×800) and a phone's (390×844), in
Chromium: the message box is on the screen, nothing scrolls sideways, only the transcript
scrolls (the page itself does not), the console menu folds behind a button on the phone,
a chat opens at its newest message and follows a streaming reply, and a reader who
scrolled up is offered "Jump to latest" instead of being pulled down.

Each test keeps screenshots under ``var/screenshots/`` (not committed) for a person to look
at."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.context import NAV
from roleplay.llm.scripted_server import Reply
from tests.browser.layout_support import (
    PHONE,
    SIZES,
    inside_viewport,
    shoot,
    sideways_scroll,
    sticking_out,
)
from tests.browser.play_support import PlayPage, save_history

pytestmark = pytest.mark.django_db(transaction=True)

ADMIN = ("boss", "pw-boss-123456")
LONG_REPLY = (
    "*Mira sets the kettle on the stove and leans against the window.* "
    '"The fog rolls in every night about this time," she says. '
) * 3


@pytest.fixture
def long_history(conversation):
    lines = []
    for i in range(15):
        lines += [("user", f"Question {i}: where does the road go?"), ("assistant", LONG_REPLY)]
    return save_history(conversation, *lines)


@pytest.fixture
def admin_user(tenant):
    from console.services import ensure_console_user

    return ensure_console_user(tenant, *ADMIN, "admin")[0]


def at_bottom(page) -> bool:
    return page.evaluate(
        """() => { const t = document.getElementById("transcript");
                   return t.scrollHeight - t.scrollTop - t.clientHeight <= 2; }"""
    )


@pytest.mark.parametrize("size", list(SIZES))
def test_the_chat_fits_the_screen_and_opens_at_the_newest_message(
    size, operator_user, conversation, long_history, llm, browser_page, login
):
    browser_page.set_viewport_size(SIZES[size])
    play = PlayPage(browser_page, conversation).open(login)
    page = play.page
    shoot(page, f"chat-{size}")

    for box in ("#input", "#send"):
        expect(page.locator(box)).to_be_visible()
        assert inside_viewport(page, page.locator(box)), f"{box} is off the screen"
    assert sideways_scroll(page) == 0, sticking_out(page)
    # Only the transcript scrolls: the page is exactly the screen's height.
    assert page.evaluate("document.documentElement.scrollHeight <= window.innerHeight + 1")
    # Opened at the newest message.
    assert at_bottom(page)
    assert inside_viewport(page, play.reply.locator(".msg-tools"))
    # The reply's buttons stay inside its bubble.
    tools = play.reply.locator(".msg-tools").bounding_box()
    bubble = play.reply.locator(".msg-body").bounding_box()
    assert tools["x"] + tools["width"] <= bubble["x"] + bubble["width"] + 0.5

    transcript = page.locator("#transcript").bounding_box()
    question = play.message(len(long_history) - 2).bounding_box()
    if size == "phone":  # full-width messages on a narrow screen
        assert question["width"] >= transcript["width"] - 8
    else:
        assert question["width"] < transcript["width"] * 0.9
    assert play.problems() == []


@pytest.mark.parametrize("size", list(SIZES))
def test_the_console_menu_folds_into_a_button_on_a_phone(size, admin_user, browser_page, login):
    page = browser_page
    page.set_viewport_size(SIZES[size])
    login(page, *ADMIN)
    toggle = page.locator(".menu-toggle")
    characters = page.locator("#site-menu nav a", has_text="Characters")
    logout = page.get_by_role("button", name="Log out")
    if size == "desktop":
        expect(toggle).to_be_hidden()
        expect(characters).to_be_visible()
        expect(logout).to_be_visible()
        return
    expect(toggle).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(characters).to_be_hidden()
    assert page.locator("header.topbar").bounding_box()["height"] < 70
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(characters).to_be_visible()
    assert inside_viewport(page, logout)
    shoot(page, "console-menu-open-phone")
    page.keyboard.press("Escape")
    expect(characters).to_be_hidden()
    toggle.click()
    with page.expect_navigation():
        characters.click()
    assert page.url.endswith("/console/characters/")


def console_paths(tenant_objects) -> list[str]:
    from django.urls import reverse

    character, conversation = tenant_objects
    return [
        "/console/",
        *(reverse(name) for _label, name, _role in NAV),
        f"/console/characters/{character.pk}/",
        "/console/characters/import/",
        "/console/conversations/new/",
        f"/console/conversations/{conversation.pk}/",
        f"/play/{conversation.pk}/",
    ]


@pytest.mark.parametrize("size", list(SIZES))
def test_no_console_page_scrolls_sideways(
    size, admin_user, conversation, long_history, llm, browser_page, login
):
    paths = console_paths((conversation.character, conversation))
    page = browser_page
    page.set_viewport_size(SIZES[size])
    login(page, *ADMIN)
    wide = {}
    for path in paths:
        page.goto(path)
        page.wait_for_load_state("load")
        name = re.sub(r"[0-9a-f-]{36}", "one", path).strip("/").replace("/", "-") or "dashboard"
        shoot(page, f"console-{name}-{size}")
        if sideways_scroll(page):
            wide[path] = sticking_out(page)
    assert wide == {}


def test_the_chat_follows_a_stream_and_offers_jump_to_latest(
    operator_user, conversation, long_history, llm, browser_page, login
):
    browser_page.set_viewport_size(PHONE)
    words = [f"word{i} " for i in range(40)]
    llm.enqueue(Reply(content="".join(words), chunks=40, chunk_delay=0.05))
    llm.enqueue(Reply(content="".join(words), chunks=40, chunk_delay=0.12))
    play = PlayPage(browser_page, conversation).open(login)
    page = play.page
    assert at_bottom(page)
    # Record, at each change of the transcript, whether the newest text is in view.
    page.evaluate(
        """() => {
          window.__followed = [];
          const t = document.getElementById("transcript");
          new MutationObserver(() => requestAnimationFrame(() => window.__followed.push(
            t.scrollHeight - t.scrollTop - t.clientHeight <= 2))).observe(
            t, {subtree: true, childList: true, characterData: true});
        }"""
    )
    page.fill("#input", "Tell me everything.")
    page.click("#send")
    expect(play.reply.locator(".text")).to_contain_text("word39")
    play.wait_idle()
    followed = page.evaluate("window.__followed")
    assert len(followed) > 10 and all(followed), followed
    shoot(page, "chat-followed-phone")

    # A reader who scrolled up stays there while the next reply streams.
    play.reply.locator(".msg-regenerate").click()
    expect(play.reply).to_have_class(re.compile(r"\bstreaming\b"))
    # The reader scrolls up, and something arrives before the scroll event is handled (a
    # delta in the same frame): it must not pull the reader back down.
    page.evaluate(
        """() => {
          const t = document.getElementById("transcript");
          t.scrollTop = 0;
          t.lastElementChild.appendChild(document.createTextNode(" "));
        }"""
    )
    jump = page.locator("#jump-latest")
    expect(jump).to_be_visible()
    assert page.evaluate("document.getElementById('transcript').scrollTop") < 50
    shoot(page, "chat-jump-to-latest-phone")
    jump.click()
    expect(jump).to_be_hidden()
    play.wait_idle()
    assert at_bottom(page)
    assert play.problems() == []
