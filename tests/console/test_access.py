"""Who may open which console page: login, tenant, role, and foreign ids as 404."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _pages(character, conversation, config, token_id=1):
    return [
        "/console/",
        "/console/characters/",
        "/console/characters/new/",
        f"/console/characters/{character.pk}/",
        f"/console/characters/{character.pk}/delete/",
        "/console/conversations/",
        "/console/conversations/new/",
        f"/console/conversations/{conversation.pk}/",
        "/console/models/",
        "/console/models/new/",
        f"/console/models/{config.pk}/",
        f"/console/models/{config.pk}/delete/",
        "/console/tokens/",
        "/console/tokens/new/",
        "/console/audit/",
    ]


def test_every_page_requires_login(conversation, character, model_config):
    client = Client()
    for url in _pages(character, conversation, model_config):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/console/login/?next="), url
    for url in [
        f"/console/models/{model_config.pk}/test/",
        f"/console/models/{model_config.pk}/default/",
        "/console/tokens/1/revoke/",
    ]:
        response = client.post(url)
        assert response.status_code == 302 and "/console/login/" in response["Location"], url


def test_a_user_without_a_tenant_is_forbidden(django_user_model):
    client = Client()
    client.force_login(django_user_model.objects.create_user("drifter", password="x" * 12))
    assert client.get("/console/characters/").status_code == 403


def test_admin_sees_every_page(admin_client, conversation, character, model_config):
    for url in _pages(character, conversation, model_config):
        assert admin_client.get(url).status_code == 200, url


def test_viewer_reads_but_cannot_write(viewer_client, conversation, character, model_config):
    for url in [
        "/console/",
        "/console/characters/",
        f"/console/characters/{character.pk}/",
        "/console/conversations/",
        f"/console/conversations/{conversation.pk}/",
        "/console/models/",
        f"/console/models/{model_config.pk}/",
    ]:
        assert viewer_client.get(url).status_code == 200, url
    writes = [
        ("/console/characters/new/", {"name": "Nope"}),
        (f"/console/characters/{character.pk}/", {"name": "Renamed"}),
        (f"/console/characters/{character.pk}/delete/", {}),
        ("/console/conversations/new/", {"character": str(character.pk)}),
        (f"/console/models/{model_config.pk}/", {"name": "x"}),
        (f"/console/models/{model_config.pk}/delete/", {}),
        (f"/console/models/{model_config.pk}/default/", {}),
        (f"/console/models/{model_config.pk}/test/", {}),
        ("/console/tokens/new/", {"name": "t", "scopes": ["play"]}),
    ]
    for url, data in writes:
        assert viewer_client.post(url, data).status_code == 403, url
    # Nothing changed.
    character.refresh_from_db()
    assert character.name == "Mira"
    from roleplay.models import Character, Conversation

    assert Character.objects.count() == 1 and Conversation.objects.count() == 1
    # Forms for viewers offer no edit buttons and disabled fields.
    page = viewer_client.get(f"/console/characters/{character.pk}/").content.decode()
    assert "disabled" in page and ">Save<" not in page and "/delete/" not in page
    listing = viewer_client.get("/console/characters/").content.decode()
    assert "New character" not in listing and "/delete/" not in listing
    models = viewer_client.get("/console/models/").content.decode()
    assert "hx-post" not in models and "Make default" not in models


def test_operator_edits_content_but_not_models_or_tokens(
    operator_client, operator_user, tenant, model_config
):
    from console.models import ApiToken

    assert operator_client.get("/console/models/").status_code == 200
    assert operator_client.get("/console/models/new/").status_code == 403
    assert operator_client.post("/console/models/new/", {"name": "x"}).status_code == 403
    response = operator_client.post(f"/console/models/{model_config.pk}/", {"name": "renamed"})
    assert response.status_code == 403
    assert operator_client.post(f"/console/models/{model_config.pk}/delete/").status_code == 403
    response = operator_client.post(f"/console/models/{model_config.pk}/default/")
    assert response.status_code == 403
    model_config.refresh_from_db()
    assert model_config.name == "scripted"
    assert operator_client.get("/console/tokens/").status_code == 403
    assert operator_client.get("/console/tokens/new/").status_code == 403
    response = operator_client.post("/console/tokens/new/", {"name": "t", "scopes": ["admin"]})
    assert response.status_code == 403
    assert not ApiToken.objects.filter(tenant=tenant).exists()
    # The operator's nav still works and the model list shows no admin buttons.
    page = operator_client.get("/console/models/").content.decode()
    assert "Make default" not in page and "/console/models/new/" not in page


def test_write_only_urls_refuse_get(admin_client, model_config):
    assert admin_client.get(f"/console/models/{model_config.pk}/default/").status_code == 405
    assert admin_client.get(f"/console/models/{model_config.pk}/test/").status_code == 405
    assert admin_client.get("/console/tokens/1/revoke/").status_code == 405


def test_foreign_ids_are_not_found(admin_client, foreign, tenant):
    from roleplay.models import Character, ModelConfig

    character, conversation = foreign["character"], foreign["conversation"]
    config, token = foreign["config"], foreign["token"]
    gets = [
        f"/console/characters/{character.pk}/",
        f"/console/characters/{character.pk}/delete/",
        f"/console/conversations/{conversation.pk}/",
        f"/console/conversations/?character={character.pk}",
        f"/console/models/{config.pk}/",
        f"/console/models/{config.pk}/delete/",
    ]
    for url in gets:
        assert admin_client.get(url).status_code == 404, url
    posts = [
        f"/console/characters/{character.pk}/",
        f"/console/characters/{character.pk}/delete/",
        f"/console/models/{config.pk}/",
        f"/console/models/{config.pk}/delete/",
        f"/console/models/{config.pk}/default/",
        f"/console/models/{config.pk}/test/",
        f"/console/tokens/{token.pk}/revoke/",
    ]
    for url in posts:
        assert admin_client.post(url, {"name": "hijack"}).status_code == 404, url
    assert Character.objects.get(pk=character.pk).name == "Stranger"
    config.refresh_from_db()
    assert config.name == "theirs" and not config.is_default
    token.refresh_from_db()
    assert token.revoked_at is None
    assert ModelConfig.objects.filter(tenant=tenant).count() == 0
    # Malformed ids are 404 too, not 500.
    assert admin_client.get("/console/conversations/?character=not-a-uuid").status_code == 404
    assert admin_client.get("/console/characters/not-a-uuid/").status_code == 404


def test_lists_never_show_another_tenants_rows(admin_client, foreign, character):
    for url in ["/console/characters/", "/console/conversations/", "/console/models/"]:
        page = admin_client.get(url).content.decode()
        assert "Stranger" not in page and "theirs" not in page, url
    page = admin_client.get("/console/conversations/new/").content.decode()
    assert "Stranger" not in page and "x-1" not in page


def test_nav_names_only_pages_that_exist(admin_client):
    from console.context import NAV

    page = admin_client.get("/console/").content.decode()
    for label, name, _role in NAV:
        url = reverse(name)  # an entry without a route fails here
        assert f'href="{url}"' in page and label in page
        assert admin_client.get(url).status_code == 200, url
    # Areas that have no pages yet are neither linked nor served.
    for url in ["/console/story/"]:
        assert url not in page
        assert admin_client.get(url).status_code == 404, url


def test_nav_shows_each_role_the_pages_it_may_open(operator_client, viewer_client):
    for client in (operator_client, viewer_client):
        page = client.get("/console/").content.decode()
        assert 'href="/console/worldbooks/"' in page and 'href="/console/models/"' in page
        assert 'href="/console/tokens/"' not in page and 'href="/console/audit/"' not in page
