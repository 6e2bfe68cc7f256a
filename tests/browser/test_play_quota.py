"""A player at their plan's limit: the play page says so in words, and keeps the text."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.play_support import PlayPage

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_refused_turn_is_explained_and_its_text_given_back(
    operator_user, conversation, llm, browser_page, login, orm
):
    from roleplay.quotas import services

    plan = orm(services.create_plan, conversation.tenant, name="Tiny", messages_per_day=1)
    orm(services.assign_plan, conversation.player, plan)
    play = PlayPage(browser_page, conversation).open(login)
    page = play.page
    page.fill("#input", "Where am I?")
    page.click("#send")
    play.wait_idle()
    page.locator("#transcript li.msg.assistant:not(.opening)").last.wait_for()
    page.fill("#input", "And now?")
    page.click("#send")
    error = page.locator("#play-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("Limit reached: you have used 1 of 1 messages today.")
    expect(error).to_contain_text("You can go on")
    expect(page.locator("#input")).to_have_value("And now?")  # not stored: sent again later
    assert play.script_errors == []
