"""A conversation's memory document in Chromium: an operator opens it from the conversation,
writes two revisions in the editor, and sees what the second changed; no Content-Security-
Policy violation and no console error."""

from __future__ import annotations

import pytest

from tests.security.test_csp_browser import RECORD_VIOLATIONS, violations

pytestmark = pytest.mark.django_db(transaction=True)

USER, PASSWORD = "op", "pw-op-123456"  # the ``operator_user`` fixture's account


def _stored(tenant, conversation):
    from memory.documents.selectors import read_document

    return read_document(tenant, str(conversation.pk), "default")


def test_edit_a_document_and_see_the_diff(
    conversation, operator_user, tenant, browser_page, login, orm
):
    page = browser_page
    page.add_init_script(RECORD_VIOLATIONS)
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text))
    login(page, USER, PASSWORD, next_path=f"/console/conversations/{conversation.pk}/")
    page.click("#conversation-memory")
    page.click("#open-slot button")
    assert "empty (revision 0)" in page.inner_text("#document-revision")

    page.fill("#document-text", '{"scene": "city gate", "keyHolder": "user"}')
    page.click("#document-save")
    page.wait_for_selector("#revision-1")
    text = page.input_value("#document-text")
    page.fill("#document-text", text.replace('"user"', '"guard"'))
    page.click("#document-save")
    page.wait_for_selector("#revision-2")

    assert page.inner_text("#document-revision") == "revision 2"
    removed = page.locator("#revision-2 .diff-line.del").all_inner_texts()
    added = page.locator("#revision-2 .diff-line.add").all_inner_texts()
    assert removed == ['-   "keyHolder": "user",'] and added == ['+   "keyHolder": "guard",']
    assert orm(_stored, tenant, conversation) == {
        "revision": 2,
        "memory": {"scene": "city gate", "keyHolder": "guard"},
    }
    assert violations(page, console_errors) == [] and console_errors == []
