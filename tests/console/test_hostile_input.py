"""Console pages under an attacker's input: each answer is a page (a form error, an empty
list), never a server error. Each case below was a 500 before.

- JSON boxes (a model config's ``extra``, a worldbook's ``metadata``) read JSON nested past
  the interpreter's recursion limit (``RecursionError``), ``NaN``, numbers past 64 bits and
  the ``\\u0000`` / lone-surrogate escapes PostgreSQL cannot store (and the page that showed
  the form again could not encode): all now a form error, through ``console.storable.loads``.
- A list search holding a NUL (``?q=%00``) reached PostgreSQL, which refuses NUL in a
  comparison: ``console.lists.matching`` drops it.
"""

from __future__ import annotations

import pytest

from roleplay.models import ModelConfig
from tests.console.test_model_configs import _form

pytestmark = pytest.mark.django_db

HOSTILE_JSON = [
    '{"a":' * 3000 + "1" + "}" * 3000,
    "[" * 5000 + "]" * 5000,
    '{"top_k": NaN}',
    '{"top_k": 1e400}',
    '{"top_k": 100000000000000000000000000000}',
    '{"stop": "\\u0000"}',
    '{"stop": "\\ud800"}',
    '{"\\udfff": 1}',
]


@pytest.mark.parametrize("text", HOSTILE_JSON, ids=range(len(HOSTILE_JSON)))
def test_a_json_box_refuses_what_it_cannot_keep(admin_client, tenant, llm, text):
    response = admin_client.post("/console/models/new/", _form(llm, extra=text))
    assert response.status_code == 400
    assert "Not JSON this field can keep" in response.content.decode()
    assert not ModelConfig.objects.filter(tenant=tenant).exists()


@pytest.mark.parametrize("text", HOSTILE_JSON, ids=range(len(HOSTILE_JSON)))
def test_a_worldbook_json_box_refuses_what_it_cannot_keep(admin_client, tenant, text):
    from worldbook import services
    from worldbook.models import BookDraft

    book, _ = services.create_book(tenant, services.validate_book({"name": "Greyport"}))
    fields = {"name": "Renamed", "description": "", "metadata": text}
    url = f"/console/worldbooks/{book.pk}/draft/book/"
    response = admin_client.post(url, fields, follow=True)
    assert response.status_code == 200
    assert "Book fields not saved" in response.content.decode()
    assert not BookDraft.objects.filter(book=book).exclude(book_fields={}).exists()


@pytest.mark.parametrize("page", ["characters", "players", "models", "images", "workflow-tools"])
def test_a_list_search_with_a_nul_finds_nothing_odd(admin_client, model_config, page):
    response = admin_client.get(f"/console/{page}/", {"q": "scr\x00ipted"})
    assert response.status_code == 200
    response = admin_client.get(f"/console/{page}/", {"q": "\x00"})
    assert response.status_code == 200


def test_a_dio_instruction_the_database_cannot_store_is_refused(admin_client, conversation):
    """A console box posted with a NUL reached the database (found by test_fuzz_console)."""
    from roleplay.dio.models import DioTask

    url = f"/console/conversations/{conversation.pk}/dio/"
    response = admin_client.post(url, {"action": "submit", "instruction": "be \x00 terse"})
    assert response.status_code in (200, 302)
    assert not DioTask.objects.filter(conversation=conversation).exists()
