"""A newcomer joins by invite in a real browser: the operator makes an invite on the console,
the player signs up with it, confirms the e-mail through the link the console's Outgoing
mail page shows (no mail server), signs in, and an operator's own login is not a player's."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import login_as

pytestmark = pytest.mark.django_db(transaction=True)

ADMIN = ("boss", "pw-boss-123456")
PASSWORD = "pw-newcomer-123456"


@pytest.fixture
def admin(tenant):
    from console.services import ensure_console_user
    from roleplay.accounts.services import set_app_settings

    set_app_settings(tenant, signup_policy="invite")
    return ensure_console_user(tenant, *ADMIN, "admin")[0]


def test_a_newcomer_joins_by_invite_and_verifies_the_email(admin, browser_page):
    page = browser_page
    login_as(page, *ADMIN, "/console/player-app/")
    page.locator("#invite-form input[name='max_uses']").fill("2")
    with page.expect_navigation():
        page.locator("#invite-form button[type='submit']").click()
    link = page.locator("#new-invite-link").inner_text().strip()
    assert "/app/invite/" in link
    # An operator is not a player.
    page.goto("/app/")
    assert page.locator("#not-player").is_visible()

    player = page.context.browser.new_context(base_url=page.url.split("/app/")[0])
    newcomer = player.new_page()
    newcomer.goto(link)
    newcomer.fill("input[name='email']", "newcomer@example.com")
    newcomer.fill("input[name='display_name']", "Newt")
    newcomer.fill("input[name='password']", PASSWORD)
    newcomer.fill("input[name='password_again']", PASSWORD)
    with newcomer.expect_navigation():
        newcomer.click("#sign-up")
    assert newcomer.locator("#verify-pending").is_visible()

    page.goto("/console/mail/")
    body = page.locator("pre.mail-body").first.inner_text()
    verify = re.search(r"https?://\S+/app/verify/\S+/", body).group(0)

    newcomer.goto(verify)
    assert newcomer.locator("#verified h1").inner_text() == "Your e-mail is confirmed"
    newcomer.click("#go-sign-in")
    newcomer.fill("input[name='email']", "newcomer@example.com")
    newcomer.fill("input[name='password']", PASSWORD)
    with newcomer.expect_navigation():
        newcomer.click("#sign-in")
    assert newcomer.url.endswith("/app/")
    newcomer.goto("/app/account/")
    assert "newcomer@example.com" in newcomer.content()
    assert newcomer.locator("#devices").inner_text().count("this device") == 1
    player.close()
