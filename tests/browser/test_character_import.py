"""A card import in Chromium: the operator uploads a PNG card on the console, lands on the
new character with its avatar (the card's own image), its bound worldbook and the import
report, adds a greeting with the page's script, and starts a conversation on an alternate
greeting chosen from the options htmx fetches for the character; no CSP violation."""

from __future__ import annotations

import pytest

from tests.characters.cardfiles import BOOK, png_card, v3_card
from tests.security.test_csp_browser import RECORD_VIOLATIONS, violations

pytestmark = pytest.mark.django_db(transaction=True)

USER, PASSWORD = "op", "pw-op-123456"  # the ``operator_user`` fixture's account


def _character(name: str):
    from roleplay.models import Character

    character = Character.objects.get(name=name)
    return character.pk, character.alternate_greetings, character.avatar is not None


def _conversation_greeting(character_id):
    from roleplay.models import Conversation

    return Conversation.objects.get(character_id=character_id).greeting_index


def test_a_png_card_imported_in_the_console(tenant, operator_user, browser_page, login, orm):
    page = browser_page
    page.add_init_script(RECORD_VIOLATIONS)
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text))
    login(page, USER, PASSWORD, next_path="/console/characters/")

    with page.expect_navigation():
        page.click("text=Import a card")
    card = png_card(v3_card(book=BOOK), size=(60, 90))
    page.set_input_files(
        "input[name=file]",
        files=[{"name": "mira.png", "mimeType": "image/png", "buffer": card}],
    )
    with page.expect_navigation():
        page.click("#card-import button[type=submit]")

    # The character page: flash, avatar from the card image, bound book, report.
    assert "Imported “Mira” from mira.png." in page.locator(".flash").inner_text()
    character_id, greetings, has_avatar = orm(_character, "Mira")
    assert page.url.endswith(f"/console/characters/{character_id}/")
    assert has_avatar and greetings == ["The lamp needs trimming.", "You again?"]
    avatar = page.locator("#character-avatar")
    avatar.wait_for()
    page.wait_for_function("() => document.querySelector('#character-avatar').naturalWidth > 0")
    assert avatar.evaluate("img => [img.naturalWidth, img.naturalHeight]") == [60, 90]
    assert "Greyport lore" in page.locator("#bound-books").inner_text()
    page.click("#import-report summary")
    assert "extensions.roleplay_card.nickname" in page.locator("#import-report").inner_text()
    areas = page.locator("textarea[name=alternate_greetings]")
    assert areas.nth(1).input_value() == "You again?"

    # The list field's script adds an empty greeting box without a save.
    before = areas.count()
    page.click("[data-list-add]")
    assert areas.count() == before + 1 and areas.nth(before).input_value() == ""

    # A conversation on the second alternate greeting, chosen from htmx-fetched options
    # (the three openings, then "No opening").
    page.goto("/console/conversations/new/")
    page.select_option("select[name=character]", str(character_id))
    page.wait_for_function(
        "() => document.querySelectorAll('select[name=greeting_index] option').length === 4"
    )
    last = page.locator("select[name=greeting_index] option").nth(3).inner_text()
    assert last == "No opening"
    page.select_option("select[name=greeting_index]", "2")
    with page.expect_navigation():
        page.click("form button[type=submit]")
    assert "You again?" in page.locator("#conversation-greeting").inner_text()
    assert orm(_conversation_greeting, character_id) == 2
    assert violations(page, console_errors) == []
