"""Suggested replies on the play page: the button asks over the socket for three options
after the latest reply, and clicking one sends it as the player's message."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from roleplay.llm.scripted_server import Reply
from roleplay.models import PlanningRun, Turn
from tests.agentic.world import happy_router, make_world
from tests.browser.play_support import PlayPage, save_history

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agentic_conversation(operator_user, tenant, player, character, llm):
    """A conversation under an Agent V2 scenario whose last reply's background run is
    recorded (the guidance the suggestions read)."""
    scenario, _configs, conversation = make_world(tenant, player, character, llm)
    user, reply = save_history(conversation, ("user", "Hello?"), ("assistant", "Welcome in."))
    turn = Turn.objects.create(
        tenant=tenant, conversation=conversation, client_message_id="old",
        user_message_id=user.pk, assistant_message_id=reply.pk, status="complete",
    )  # fmt: skip
    PlanningRun.objects.create(
        tenant=tenant, turn=turn, conversation=conversation, scenario=scenario,
        assistant_message_id=reply.pk, status="done", outcome="no_tools",
        snapshot={"revision": 0, "guidance": "The keeper waits by the lamp."},
    )  # fmt: skip
    router = happy_router()
    llm.default = Reply.from_callable(router)
    return conversation, router


def test_a_suggestion_is_sent_as_the_players_message(agentic_conversation, browser_page, login):
    conversation, router = agentic_conversation
    play = PlayPage(browser_page, conversation).open(login)
    page = play.page
    suggest = page.locator("#suggest")
    expect(suggest).to_be_enabled()
    suggest.click()
    options = page.locator("#suggestions .option")
    expect(options).to_have_count(3)
    expect(options.nth(1)).to_have_text("How do you feel?")
    material = router.seen["autoreply"][-1]["messages"][-1]["content"]
    assert "The keeper waits by the lamp." in material
    options.nth(1).click()
    expect(page.locator("#transcript li.msg.user .text").last).to_have_text("How do you feel?")
    expect(options).to_have_count(0)
    play.wait_idle()
    assert play.problems() == []
