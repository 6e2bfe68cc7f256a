"""Console pages of a conversation's memory documents: viewers read, operators write by
compare-and-set, a foreign conversation is a 404, and each revision shows what it changed."""

from __future__ import annotations

import pytest

from memory.documents.selectors import read_document
from memory.documents.services import put_document
from memory.models import MemoryDocumentRevision

pytestmark = pytest.mark.django_db


def _url(conversation, slot=None):
    base = f"/console/conversations/{conversation.pk}/memory/"
    return base if slot is None else f"{base}{slot}/"


def _save(client, conversation, text, expected, slot="default"):
    return client.post(_url(conversation, slot), {"memory": text, "expected_revision": expected})


def test_operator_writes_revisions_and_sees_each_change(operator_client, conversation, tenant):
    assert operator_client.get(_url(conversation)).status_code == 200
    page = operator_client.get(_url(conversation, "default"))
    assert page.status_code == 200 and b"empty (revision 0)" in page.content
    res = _save(operator_client, conversation, '{"scene": "gate", "keyHolder": "user"}', 0)
    assert res.status_code == 302
    res = _save(operator_client, conversation, '{"scene": "gate", "keyHolder": "guard"}', 1)
    assert res.status_code == 302
    doc = read_document(tenant, str(conversation.pk), "default")
    assert doc == {"revision": 2, "memory": {"scene": "gate", "keyHolder": "guard"}}
    assert list(MemoryDocumentRevision.objects.values_list("origin", flat=True)) == [
        "console",
        "console",
    ]
    html = operator_client.get(_url(conversation, "default")).content.decode()
    assert '<pre class="diff-line del">-   &quot;keyHolder&quot;: &quot;user&quot;,</pre>' in html
    assert '<pre class="diff-line add">+   &quot;keyHolder&quot;: &quot;guard&quot;,</pre>' in html
    listing = operator_client.get(_url(conversation)).content.decode()
    assert f'href="{_url(conversation, "default")}"' in listing


def test_a_stale_save_is_a_conflict_that_keeps_the_text(operator_client, conversation, tenant):
    put_document(tenant, str(conversation.pk), "default", 0, {"v": 1}, origin="api")
    put_document(tenant, str(conversation.pk), "default", 1, {"v": 2}, origin="api")
    res = _save(operator_client, conversation, '{"mine": "kept"}', 1)
    assert res.status_code == 409
    html = res.content.decode()
    assert (
        "Someone saved revision 2 meanwhile" in html
        and "&quot;mine&quot;: &quot;kept&quot;" in html
    )
    assert read_document(tenant, str(conversation.pk), "default")["memory"] == {"v": 2}


@pytest.mark.parametrize(
    ("text", "expected", "shown"),
    [
        ("not json", 0, "This is not JSON"),
        ("[1, 2]", 0, "memory must be a JSON object"),
        ('{"a": 1}', "x", "expectedRevision must be an integer"),
    ],
)
def test_bad_input_is_shown_and_writes_nothing(
    operator_client, conversation, text, expected, shown
):
    res = _save(operator_client, conversation, text, expected)
    assert res.status_code == 422 and shown in res.content.decode()
    assert MemoryDocumentRevision.objects.count() == 0


def test_a_bad_slot_name_goes_back_to_the_list(operator_client, conversation):
    res = operator_client.get(_url(conversation) + "?slot=bad%20slot")
    assert res.status_code == 200 and b"a slot is 1-64" in res.content
    assert operator_client.get(_url(conversation) + "?slot=scene").status_code == 302


def test_viewer_reads_but_cannot_save(viewer_client, conversation, tenant):
    put_document(tenant, str(conversation.pk), "default", 0, {"v": 1}, origin="api")
    page = viewer_client.get(_url(conversation, "default"))
    assert (
        page.status_code == 200
        and b"readonly" in page.content
        and b"document-save" not in page.content
    )
    assert _save(viewer_client, conversation, '{"v": 2}', 1).status_code == 403
    assert read_document(tenant, str(conversation.pk), "default")["revision"] == 1


def test_another_tenants_conversation_is_not_found(admin_client, foreign):
    conversation = foreign["conversation"]
    assert admin_client.get(_url(conversation)).status_code == 404
    assert admin_client.get(_url(conversation, "default")).status_code == 404
    assert _save(admin_client, conversation, '{"v": 1}', 0).status_code == 404
    assert MemoryDocumentRevision.objects.count() == 0
