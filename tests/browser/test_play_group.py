"""A group chat in a real browser: auto-mode replies stream one after another, each under
its speaker's name and avatar; Speak makes a member answer (auto-mode follows), Mute is
kept."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.play_support import PlayPage

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def group(conversation, tenant):
    from roleplay.groups import services
    from roleplay.models import Character, Conversation

    cast = [Character.objects.create(tenant=tenant, name=n) for n in ("Jon", "Ada")]
    for character in cast:
        services.add_member(conversation, character)
    Conversation.objects.filter(pk=conversation.pk).update(
        group_mode="list", auto_turns=2, auto_delay_ms=10
    )
    return conversation, {c.name: str(c.pk) for c in cast}


def test_a_group_answers_itself_and_the_player_picks_and_mutes(
    operator_user, group, llm, browser_page, login
):
    conversation, ids = group
    ids["Mira"] = str(conversation.character_id)
    play = PlayPage(browser_page, conversation).open(login)
    page = play.page
    expect(page.locator("#group-members .member")).to_have_count(3)
    page.fill("#input", "Hello, all of you.")
    page.click("#send")
    replies = page.locator("#transcript li.msg.assistant:not(.opening)")
    expect(replies).to_have_count(3)
    play.wait_idle()
    expect(replies.locator(".who")).to_have_text(["Mira", "Jon", "Ada"])
    for index, name in enumerate(("Mira", "Jon", "Ada")):
        src = replies.nth(index).locator("img.msg-avatar").get_attribute("src")
        assert ids[name] in src, (name, src)

    ada = page.locator('#group-members .member[data-name="Ada"]')
    ada.locator(".member-speak").click()  # Ada answers; auto-mode follows her
    expect(replies).to_have_count(6)
    play.wait_idle()
    expect(replies.locator(".who")).to_have_text(["Mira", "Jon", "Ada", "Ada", "Mira", "Jon"])

    jon = page.locator('#group-members .member[data-name="Jon"]')
    jon.locator(".member-mute").click()
    expect(jon).to_have_class("member muted")
    expect(jon.locator(".member-mute")).to_have_text("Unmute")
    play.reload()  # the stored replies keep their speakers
    expect(replies.locator(".who")).to_have_text(["Mira", "Jon", "Ada", "Ada", "Mira", "Jon"])
    expect(page.locator('#group-members .member[data-name="Jon"]')).to_have_class("member muted")
    assert not play.script_errors
