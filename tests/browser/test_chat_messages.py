"""How the chat page shows messages, in Chromium: roleplay Markdown (italic *actions*, bold,
highlighted "speech", lists, code, links) for replies and player messages, stored and
streamed alike, with HTML in a reply shown as text and never run; the source kept for the
editor and Copy; round avatars with names and times; a header with the character, the
conversation's title (given from the first exchange) and links back."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from roleplay.llm.scripted_server import Reply
from tests.browser.layout_support import PHONE, shoot
from tests.browser.play_support import PlayPage, save_history
from tests.characters.cardfiles import image_bytes

pytestmark = pytest.mark.django_db(transaction=True)

PAYLOAD = (
    "<script>window.__pwned = 1</script>\n"
    '<img src="x" onerror="window.__pwned = 2">\n'
    "[plain link](https://example.com/x) [bad link](javascript:window.__pwned=3) "
    '<b onclick="x()">b</b>'
)
REPLY = (
    '*Mira smiles and sets down her cup.* "Welcome, **traveller**," she says.\n\n'
    "- tea\n- **bread**\n\nUse `the side door`.\n\n" + PAYLOAD
)
ASKED = "*waves* Hello **there**!"


@pytest.fixture
def markdown_history(conversation):
    return save_history(conversation, ("user", ASKED), ("assistant", REPLY))


def check_rendered(reply) -> None:
    text = reply.locator(".text")
    expect(text.locator("em").first).to_have_text("Mira smiles and sets down her cup.")
    expect(text.locator(".speech").first).to_have_text('"Welcome, traveller,"')
    expect(text.locator(".speech strong")).to_have_text("traveller")
    expect(text.locator("ul > li")).to_have_text(["tea", "bread"])
    expect(text.locator("code")).to_have_text("the side door")
    link = text.locator("a", has_text="plain link")
    expect(link).to_have_attribute("href", "https://example.com/x")
    expect(link).to_have_attribute("rel", "noopener nofollow")
    # HTML is text: no element came from it, no handler, no javascript: link.
    expect(text).to_contain_text("<script>window.__pwned = 1</script>")
    expect(text).to_contain_text('onerror="window.__pwned = 2"')
    assert text.locator("script, img, b, [onclick], [onerror], [style]").count() == 0
    assert text.locator("a[href^='javascript']").count() == 0
    expect(text).to_contain_text("[bad link](javascript:window.__pwned=3)")


def test_markdown_renders_and_html_in_a_reply_never_runs(
    operator_user, conversation, markdown_history, llm, browser_page, login
):
    llm.enqueue(Reply(content=REPLY, chunks=12, chunk_delay=0.02))
    play = PlayPage(browser_page, conversation).open(login)
    page = play.page
    check_rendered(play.reply)
    asked = play.message(0).locator(".text")
    expect(asked.locator("em")).to_have_text("waves")
    expect(asked.locator("strong")).to_have_text("there")

    # The editor and Copy work on the stored source, marks and all.
    play.reply.locator(".msg-edit").click()
    expect(play.reply.locator(".msg-editor textarea")).to_have_value(REPLY)
    play.reply.locator(".msg-editor textarea").press("Escape")

    # A streamed reply is rendered the same way as it arrives.
    play.reply.locator(".msg-regenerate").click()
    play.wait_idle()
    expect(play.reply.locator(".swipe-count")).to_have_text("2/2")
    check_rendered(play.reply)
    shoot(page, "chat-markdown-desktop")
    assert page.evaluate("window.__pwned") is None
    assert play.problems() == []


@pytest.fixture
def persona_with_avatar(conversation):
    from roleplay.characters.services import avatars
    from roleplay.players.services import personas

    persona = personas.create_persona(
        conversation.tenant, player=conversation.player, name="Traveller"
    )
    avatars.set_avatar(persona, image_bytes("PNG", (40, 40), (200, 60, 60)))
    avatars.set_avatar(conversation.character, image_bytes("PNG", (50, 50), (30, 90, 150)))
    return persona


def test_avatars_names_times_and_the_header(
    operator_user, conversation, persona_with_avatar, markdown_history, llm, browser_page, login
):
    browser_page.set_viewport_size(PHONE)
    play = PlayPage(browser_page, conversation).open(login)
    page = play.page
    for li, name in ((play.message(0), "Traveller"), (play.reply, "Mira")):
        expect(li.locator(".who")).to_have_text(name)
        avatar = li.locator("img.msg-avatar")
        expect(avatar).to_be_visible()
        avatar.evaluate("img => img.decode()")
        assert avatar.evaluate("img => img.naturalWidth") > 0
        box = avatar.bounding_box()
        assert box["width"] == box["height"]
        assert avatar.evaluate("img => getComputedStyle(img).borderRadius") == "50%"
        expect(li.locator("time.when")).to_have_attribute(
            "datetime", re.compile(r"^\d{4}-\d\d-\d\dT")
        )
    assert "persona" in play.message(0).locator("img.msg-avatar").get_attribute("src")
    assert "characters" in play.reply.locator("img.msg-avatar").get_attribute("src")

    head = page.locator(".play-head")
    expect(head.locator(".character-link")).to_have_text("Mira")
    expect(head.locator(".character-link")).to_have_attribute(
        "href", f"/console/characters/{conversation.character.pk}/"
    )
    expect(head.get_by_role("link", name="‹ Chats")).to_have_attribute(
        "href", "/console/conversations/"
    )
    head.locator("img.head-avatar").evaluate("img => img.decode()")
    shoot(page, "chat-avatars-phone")
    assert play.problems() == []


def test_the_first_exchange_titles_the_conversation(
    operator_user, conversation, llm, browser_page, login, orm
):
    llm.enqueue(Reply(content="*Mira nods.* At dawn.", chunks=3))
    play = PlayPage(browser_page, conversation).open(login)
    page = play.page
    title = page.locator("#conversation-title")
    expect(title).to_have_text("New conversation")
    page.fill("#input", "When does the ferry to Greyport leave?")
    page.click("#send")
    expect(title).to_have_text("When does the ferry to Greyport leave?")
    expect(page).to_have_title("Mira · When does the ferry to Greyport leave?")

    page.goto("/console/conversations/")
    expect(page.locator(f"#conversation-{conversation.pk}")).to_contain_text(
        "When does the ferry to Greyport leave?"
    )
    assert play.problems() == []


def test_copy_puts_the_source_on_the_clipboard(
    operator_user, conversation, markdown_history, llm, browser_page, login, live_server_url
):
    browser_page.context.grant_permissions(
        ["clipboard-read", "clipboard-write"], origin=live_server_url
    )
    play = PlayPage(browser_page, conversation).open(login)
    copy = play.reply.locator(".msg-copy")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert play.page.evaluate("navigator.clipboard.readText()") == REPLY
    expect(copy).to_have_text("Copy")
    assert play.problems() == []
