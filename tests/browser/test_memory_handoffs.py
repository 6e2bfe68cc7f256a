"""Memory handoffs in Chromium: an operator opens the page from the Memory sub-navigation,
chooses the player, creates a handoff with the form (conversation, from persona, receiving
character, a summary holding secrets, shareable entries), sees it listed as pending, accepts
it, then closes it; the database row's status and version follow every step. The summary is
shown and stored scrubbed (placeholders, never the raw secrets). No Content-Security-Policy
violation and no console error."""

from __future__ import annotations

import pytest

from tests.security.test_csp_browser import RECORD_VIOLATIONS, violations

pytestmark = pytest.mark.django_db(transaction=True)

USER, PASSWORD = "op", "pw-op-123456"  # the ``operator_user`` fixture's account
API_KEY = "sk-" + "Ab3dE5gH7k" * 4  # sk- and 40 alphanumerics
EMAIL = "ann.lee@example.org"
SUMMARY = f"We found the key under the lamp. My key is {API_KEY}, mail me at {EMAIL} later."
SCRUBBED = (
    "We found the key under the lamp. My key is [redacted:api_key], "
    "mail me at [redacted:email] later."
)


@pytest.fixture
def receiver(tenant):
    from roleplay.models import Character

    return Character.objects.create(tenant=tenant, name="Juno")


@pytest.fixture
def shareable(tenant, player, conversation):
    """(a shared preference, an entry of the conversation shared in it, a private fact)."""
    from tests.console.test_memory_handoffs_settings_console import shareable_entries

    return shareable_entries(tenant, player, conversation)


def _handoffs(tenant):
    from memory.models import MemoryHandoff

    rows = MemoryHandoff.objects.filter(tenant=tenant).prefetch_related("items")
    return [
        {
            "pk": str(row.pk),
            "status": row.status,
            "version": row.version,
            "from": row.from_character_id,
            "to": row.to_character_id,
            "session": row.session_id,
            "summary": row.summary,
            "entries": {str(item.entry_id) for item in row.items.all()},
        }
        for row in rows
    ]


def _state(pk):
    from memory.models import MemoryHandoff

    row = MemoryHandoff.objects.get(pk=pk)
    return row.status, row.version


def test_create_accept_and_close_a_handoff(
    tenant, player, character, conversation, receiver, shareable, operator_user,
    browser_page, login, orm,
):  # fmt: skip
    shared, session, private = shareable
    page = browser_page
    page.add_init_script(RECORD_VIOLATIONS)
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text))
    login(page, USER, PASSWORD, next_path="/console/memory/")
    with page.expect_navigation():
        page.click("#memory-subnav a:has-text('Handoffs')")
    assert page.url.endswith("/console/memory/handoffs/")
    assert "No handoffs" in page.inner_text("#memory-handoffs tbody")
    assert orm(_handoffs, tenant) == []

    # Choose the player: the create form lists their conversations and shareable entries.
    page.select_option("#handoff-player-choice", str(player.pk))
    with page.expect_navigation():
        page.click("#handoff-choose-player button[type='submit']")
    form = page.locator("#handoff-create-form")
    form.wait_for()
    offered = form.locator("#handoff-entries option").evaluate_all(
        "options => options.map(o => o.value)"
    )
    assert set(offered) == {str(shared.pk), str(session.pk)}
    assert str(private.pk) not in offered

    form.locator("#handoff-conversation").select_option(str(conversation.pk))
    form.locator("#handoff-from").fill(str(character.pk))
    form.locator("#handoff-to").select_option(str(receiver.pk))
    form.locator("#handoff-summary").fill(SUMMARY)
    form.locator("#handoff-entries").select_option([str(shared.pk), str(session.pk)])
    with page.expect_navigation():
        form.locator("#handoff-create-button").click()
    assert "Handoff to Juno created (pending)." in page.inner_text(".flash")

    [created] = orm(_handoffs, tenant)
    assert created["status"] == "pending" and created["version"] == 1
    assert (created["from"], created["to"]) == (str(character.pk), str(receiver.pk))
    assert created["session"] == conversation.session_id
    assert created["entries"] == {str(shared.pk), str(session.pk)}
    # Stored scrubbed: the placeholders, never the raw secrets.
    assert created["summary"] == SCRUBBED
    assert API_KEY not in created["summary"] and EMAIL not in created["summary"]

    pk = created["pk"]
    row = page.locator(f"#handoff-{pk}")
    row.wait_for()
    assert row.locator(".badge").inner_text() == "pending"
    assert row.locator("td.num").inner_text() == "1"
    assert "Juno" in row.inner_text()
    # Shown scrubbed as well, on the row and anywhere in the page.
    summary_cell = row.locator("td.content").first.inner_text()
    assert summary_cell == SCRUBBED
    html = page.content()
    assert API_KEY not in html and EMAIL not in html
    shared_cell = row.locator("td.shared").inner_text()
    assert "Use metric units." in shared_cell and "The storm reached the bay." in shared_cell
    assert row.locator("button.handoff-accept").count() == 1

    # Accept: the row is accepted at version 2, and can no longer be accepted.
    with page.expect_navigation():
        row.locator("button.handoff-accept").click()
    assert "Accepted" in page.inner_text(".flash")
    assert orm(_state, pk) == ("accepted", 2)
    row = page.locator(f"#handoff-{pk}")
    assert row.locator(".badge").inner_text() == "accepted"
    assert row.locator("td.num").inner_text() == "2"
    assert row.locator("button.handoff-accept").count() == 0
    assert row.locator("input[name='version']").input_value() == "2"

    # Close (at the version read): closed at version 3, no action left.
    with page.expect_navigation():
        row.locator("button.handoff-close").click()
    assert "Closed" in page.inner_text(".flash")
    assert orm(_state, pk) == ("closed", 3)
    row = page.locator(f"#handoff-{pk}")
    assert row.locator(".badge").inner_text() == "closed"
    assert row.locator("td.num").inner_text() == "3"
    assert row.locator("td.actions button").count() == 0
    assert API_KEY not in page.content() and EMAIL not in page.content()

    # The status filter finds it among closed handoffs, not among pending ones.
    page.locator("#handoff-filters select[name='status']").select_option("pending")
    with page.expect_navigation():
        page.click("#handoff-filters button[type='submit']")
    assert page.locator(f"#handoff-{pk}").count() == 0
    page.locator("#handoff-filters select[name='status']").select_option("closed")
    with page.expect_navigation():
        page.click("#handoff-filters button[type='submit']")
    page.locator(f"#handoff-{pk}").wait_for()

    assert orm(_handoffs, tenant)[0]["summary"] == SCRUBBED
    assert violations(page, console_errors) == [] and console_errors == []
