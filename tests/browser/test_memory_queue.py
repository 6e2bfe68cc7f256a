"""The memory review queue in Chromium: an operator opens it from the Memory page, sees a
candidate's evidence highlighted, accepts it with the keyboard (focus then moves to the next
candidate) and rejects the next with its button; the database follows. No Content-Security-
Policy violation and no console error."""

from __future__ import annotations

import pytest

from tests.security.test_csp_browser import RECORD_VIOLATIONS, violations

pytestmark = pytest.mark.django_db(transaction=True)

USER, PASSWORD = "op", "pw-op-123456"  # the ``operator_user`` fixture's account
TEXT = "Hello! Please keep replies short <3, thanks."
SPAN = "keep replies short"


@pytest.fixture
def candidates(tenant, player, character, conversation):
    from memory import services as message_store
    from memory.entries import services as entries
    from memory.models import MemoryEvidence

    def candidate(content, category):
        return entries.add_entry(
            tenant, player, kind="preference", scope="persona", content=content,
            category_key=category, character_id=str(character.pk), status="candidate",
            origin="rule",
        )  # fmt: skip

    first = candidate("Keep replies short.", "length")
    second = candidate("Call me Sam.", "name")
    session = conversation.session_id
    message_store.save_message(tenant, session, role="assistant", content="Welcome, traveller.")
    message = message_store.save_message(tenant, session, role="user", content=TEXT)
    message_store.save_message(tenant, session, role="assistant", content="Understood.")
    start = TEXT.index(SPAN)
    MemoryEvidence.objects.create(
        tenant=tenant, entry=first, message=message, start=start, end=start + len(SPAN),
        quote=SPAN, role="user",
    )  # fmt: skip
    return first, second


def _statuses(entries):
    from memory.models import MemoryEntry

    rows = MemoryEntry.objects.filter(pk__in=[entry.pk for entry in entries])
    fields = rows.values_list("pk", "status", "version")
    return {str(pk): (status, version) for pk, status, version in fields}


def test_review_candidates_with_the_keyboard_and_the_buttons(
    candidates, operator_user, browser_page, login, orm
):
    first, second = candidates
    page = browser_page
    page.add_init_script(RECORD_VIOLATIONS)
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text))
    login(page, USER, PASSWORD, next_path="/console/memory/")
    page.click("#memory-queue-link")
    page.wait_for_selector(f"#candidate-{first.pk}")

    evidence = page.locator(f"#candidate-{first.pk} .evidence-message")
    assert evidence.locator("mark").inner_text() == SPAN
    assert "Please keep replies short <3, thanks." in evidence.inner_text()  # escaped, intact
    around = page.locator(f"#candidate-{first.pk} .evidence-around").all_inner_texts()
    assert any("Welcome, traveller." in text for text in around)
    assert any("Understood." in text for text in around)

    # j focuses the first candidate, a accepts it; the queue comes back on the next one.
    # The keys are the page's deferred script's: a busy machine may not have run it yet.
    page.wait_for_load_state("domcontentloaded")
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.id") == f"candidate-{first.pk}"
    with page.expect_navigation():
        page.keyboard.press("a")
    page.wait_for_function(
        f"document.activeElement && document.activeElement.id === 'candidate-{second.pk}'"
    )
    assert page.locator(f"#candidate-{first.pk}").count() == 0
    assert "Accepted" in page.inner_text(".flash")
    assert orm(_statuses, [first])[str(first.pk)] == ("active", 2)

    # The button works as well (and without any script).
    with page.expect_navigation():
        page.click(f"#candidate-{second.pk} button.reject")
    page.wait_for_selector("#queue-empty")
    assert orm(_statuses, [second])[str(second.pk)] == ("rejected", 2)
    assert violations(page, console_errors) == [] and console_errors == []


def test_typing_in_the_editor_does_not_trigger_shortcuts(
    candidates, operator_user, browser_page, login, orm
):
    first, _second = candidates
    page = browser_page
    page.add_init_script(RECORD_VIOLATIONS)
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text))
    login(page, USER, PASSWORD, next_path="/console/memory/queue/")
    page.click(f"#candidate-{first.pk} .candidate-edit summary")
    editor = page.locator(f"#candidate-{first.pk} textarea[name=content]")
    editor.fill("")
    editor.type("a brief reply, always")  # contains "a" and "r": no shortcut fires
    with page.expect_navigation():
        page.click(f"#candidate-{first.pk} button.edit-accept")
    assert orm(_statuses, [first])[str(first.pk)] == ("active", 3)
    assert violations(page, console_errors) == [] and console_errors == []
