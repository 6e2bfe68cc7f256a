"""The console's lorebook scope pages: global books with the order between scopes, a
chat's, a persona's and a scenario's books; another tenant's target is a 404, a viewer
reads only, and the 20-book limit over every scope shows as an error."""

from __future__ import annotations

import pytest

from roleplay.models import Persona, Scenario
from tests.worldbook.console.wbc_html import form_dict
from worldbook import selectors, services

pytestmark = pytest.mark.django_db

GLOBAL = "/console/worldbooks/scopes/global/"


def _bind(client, url: str, book_id: str):
    page = client.get(url)
    assert page.status_code == 200
    data = form_dict(page.content.decode(), "wb-bindings")
    data.update({"b-0-book": [book_id], "b-0-position": ["0"]})
    return client.post(url, data)


def test_global_books_and_the_order_between_scopes(operator, viewer, tenant, book):
    response = _bind(operator, GLOBAL, str(book.pk))
    assert response.status_code == 302 and response["Location"] == GLOBAL
    bound = selectors.list_bindings(tenant, "", "global")
    assert [str(b.book_id) for b in bound] == [str(book.pk)]
    page = operator.get(GLOBAL).content.decode()
    assert '<option value="character_first" selected>' in page
    assert operator.post(GLOBAL, {"character_strategy": "evenly"}).status_code == 302
    assert selectors.scope_strategy(tenant) == "evenly"
    operator.post(GLOBAL, {"character_strategy": "nonsense"})
    assert selectors.scope_strategy(tenant) == "evenly"
    assert viewer.get(GLOBAL).status_code == 200
    assert viewer.post(GLOBAL, {"character_strategy": "global_first"}).status_code == 403


def test_chat_persona_and_scenario_pages(operator, tenant, conversation, player, book):
    persona = Persona.objects.create(tenant=tenant, player=player, name="Ann")
    scenario = Scenario.objects.create(tenant=tenant, name="Harbour")
    for scope, pk in (
        ("chat", conversation.pk),
        ("persona", persona.pk),
        ("scenario", scenario.pk),
    ):
        url = f"/console/worldbooks/scopes/{scope}/{pk}/"
        assert _bind(operator, url, str(book.pk)).status_code == 302, scope
        assert [str(b.book_id) for b in selectors.list_bindings(tenant, str(pk), scope)] == [
            str(book.pk)
        ]


def test_the_limit_over_every_scope_is_shown(operator, tenant, conversation, make_book):
    books = [make_book(tenant, [], name=f"B{i}") for i in range(21)]
    services.put_bindings(tenant, "", [{"book_id": str(b.pk)} for b in books[:20]], scope="global")
    response = _bind(
        operator, f"/console/worldbooks/scopes/chat/{conversation.pk}/", str(books[20].pk)
    )
    assert response.status_code == 422
    assert 'data-error-code="too_many_books"' in response.content.decode()
    assert selectors.list_bindings(tenant, str(conversation.pk), "chat") == []


def test_another_tenants_targets_are_404(outsider, conversation, tenant, player):
    persona = Persona.objects.create(tenant=tenant, player=player, name="Ann")
    scenario = Scenario.objects.create(tenant=tenant, name="Harbour")
    for scope, pk in (
        ("chat", conversation.pk),
        ("persona", persona.pk),
        ("scenario", scenario.pk),
    ):
        assert outsider.get(f"/console/worldbooks/scopes/{scope}/{pk}/").status_code == 404
