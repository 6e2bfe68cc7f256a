"""Branches on the play page in Chromium: "Branch from here" opens the new branch with the
shared history (marked, without Edit or Delete), "Back to the parent" returns to the
conversation as it was with the branch listed; another alternative of an older reply opens a
branch that ends with it; a checkpoint named inline is listed above the transcript."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.play_support import PlayPage, save_history

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def history(conversation):
    from memory import alternatives

    rows = save_history(
        conversation, ("user", "u0"), ("assistant", "a1"), ("user", "u2"), ("assistant", "a3")
    )
    alternatives.add_alternative(conversation.tenant, rows[1].id, content="a1-bis",
                                 status="complete")  # fmt: skip
    alternatives.select_alternative(conversation.tenant, rows[1].id, 0)
    return rows


def test_branch_from_here_and_back_to_the_parent(
    operator_user, conversation, history, browser_page, login
):
    play = PlayPage(browser_page, conversation).open(login)
    expect(play.messages).to_have_count(4)
    play.message(1).locator(".msg-branch").click()
    browser_page.wait_for_url(lambda url: str(conversation.id) not in url)
    play.wait_connected()
    expect(play.messages).to_have_count(2)
    assert play.texts() == ["u0", "a1"]
    shared = play.message(0)
    expect(shared).to_have_attribute("data-shared", "1")
    expect(shared.locator(".msg-edit")).to_be_hidden()
    expect(shared.locator(".msg-delete")).to_be_hidden()
    expect(shared.locator(".msg-branch")).to_be_visible()

    browser_page.locator(".branch-parent").click()
    browser_page.wait_for_url(f"**/play/{conversation.id}/")
    play.wait_connected()
    assert play.texts() == ["u0", "a1", "u2", "a3"]
    expect(browser_page.locator(".branch-child")).to_have_count(1)
    assert play.problems() == []


def test_an_older_reply_s_alternative_opens_a_branch_and_a_checkpoint_is_listed(
    operator_user, conversation, history, browser_page, login
):
    play = PlayPage(browser_page, conversation).open(login)
    older = play.message(1)
    expect(older.locator(".swipe-count")).to_have_text("1/2")
    expect(older.locator(".swipe-next")).to_have_attribute(
        "aria-label", "Next alternative, in a new branch"
    )
    older.locator(".swipe-next").click()
    browser_page.wait_for_url(lambda url: str(conversation.id) not in url)
    play.wait_connected()
    assert play.texts() == ["u0", "a1-bis"]

    play.message(0).locator(".msg-bookmark").click()
    form = play.message(0).locator(".msg-bookmark-form")
    form.locator("input[name='name']").fill("Before the answer")
    form.locator("button[type='submit']").click()
    expect(browser_page.locator("#branch-tree .bookmark")).to_contain_text("Before the answer")
    assert play.problems() == []
