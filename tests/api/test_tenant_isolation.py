"""Tenant isolation: another tenant's ids are 404 on every route, and never accepted in bodies.

Routes come from the URL resolver (``api_routes``), so a route added under ``/api/v1/`` is
covered here as soon as it exists; if its model is not in the test world, the test says so.
"""

from __future__ import annotations

import json
import uuid

import pytest

from tests.api.helpers import (
    api_routes,
    assert_error,
    db_snapshot,
    error_locs,
    route_cases,
    snapshot_diff,
    valid_body,
)


def _call(client, method, path, body):
    return client.generic(method, path, json.dumps(body), content_type="application/json")


def test_the_route_table_is_complete():
    templates = {route.template for route in api_routes()}
    assert {
        "/api/v1/model-configs/{pk}",
        "/api/v1/characters/{pk}",
        "/api/v1/players/{pk}",
        "/api/v1/conversations/{pk}",
        "/api/v1/conversations/{pk}/messages",
        "/api/v1/conversations/{pk}/messages/archive",
        "/api/v1/conversations/{pk}/messages/rollback",
        "/api/v1/conversations/{pk}/turns",
        "/api/v1/conversations/{pk}/ws-ticket",
    } <= templates


@pytest.mark.parametrize(("route", "method"), route_cases(lambda r, m: r.has_id))
def test_foreign_id_is_404_and_changes_nothing(api, own, foreign, route, method):
    body = valid_body(route, method, own)
    paths = [(route.path_in(foreign), "not_found")]
    if "message_id" in route.params:  # my conversation, another tenant's message
        mixed = route.path(**{**own.ids_for(route), "message_id": foreign.messages[-1].id})
        paths.append((mixed, "message_not_found"))
    for path, code in paths:
        before = db_snapshot()
        assert_error(_call(api, method, path, body), 404, code)
        assert snapshot_diff(before, db_snapshot()) == []
    # The same call on the caller's own object is accepted: the 404 above is isolation, not
    # a broken body.
    assert _call(api, method, route.path_in(own), body).status_code < 300


@pytest.mark.parametrize(("route", "method"), route_cases(lambda r, m: r.has_id))
def test_unknown_and_malformed_ids_are_404(api, own, route, method):
    body = valid_body(route, method, own)
    for pk in (uuid.uuid4(), 987654321, "not-a-uuid", "%20", "' OR 1=1 --", "9" * 40):
        before = db_snapshot()
        assert_error(_call(api, method, route.path_with(pk), body), 404, "not_found")
        assert snapshot_diff(before, db_snapshot()) == []


# Routes without an id that answer one object of the caller's tenant, not a list: the
# tenant's memory settings (their isolation: tests/memory/test_settings.py); and the
# registered workflow capabilities, the same code for every tenant (no tenant's rows).
SINGLETONS = {"memory-settings", "workflow-capabilities"}


@pytest.mark.parametrize(
    "route",
    [r for r in api_routes() if "GET" in r.methods and not r.has_id and r.name not in SINGLETONS],
    ids=str,
)
def test_lists_show_only_the_callers_rows(api, own, foreign, route):
    stored = {own.backup_id, foreign.backup_id} if route.name == "backups" else set()
    response = api.get(route.template)
    assert response.status_code == 200
    foreign_ids = {
        str(obj.pk)
        for obj in (foreign.model_config, foreign.character, foreign.player, foreign.conversation)
    } | (stored - {own.backup_id})  # stored backups are made on demand
    listed = {str(row["id"]) for row in response.json()["results"]}
    assert listed and not listed & foreign_ids


def test_foreign_tenant_sees_none_of_our_messages(other_api, own):
    path = f"/api/v1/conversations/{own.conversation.id}/messages?include_archived=true"
    assert_error(other_api.get(path), 404, "not_found")


@pytest.mark.parametrize("field", ["player", "character", "model_config"])
def test_conversation_create_with_a_foreign_id_is_rejected(api, own, foreign, field):
    from roleplay.models import Conversation

    body = {"player": own.player.id, "character": str(own.character.id)}
    body[field] = getattr(foreign, field).pk
    body[field] = str(body[field]) if field != "player" else body[field]
    before = db_snapshot()
    assert field in error_locs(api.post("/api/v1/conversations/", body, format="json"))
    assert snapshot_diff(before, db_snapshot()) == []
    assert Conversation.objects.filter(tenant=own.tenant).count() == 1


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
@pytest.mark.parametrize("field", ["player", "character", "model_config"])
def test_conversation_update_with_a_foreign_id_is_rejected(api, own, foreign, field, method):
    body = {"player": own.player.id, "character": str(own.character.id)}
    body[field] = str(getattr(foreign, field).pk)
    before = db_snapshot()
    response = _call(api, method, f"/api/v1/conversations/{own.conversation.id}/", body)
    assert field in error_locs(response)
    assert snapshot_diff(before, db_snapshot()) == []


@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_character_with_a_foreign_model_config_is_rejected(api, own, foreign, method):
    body = {"name": "Spy", "model_config": str(foreign.model_config.id)}
    path = "/api/v1/characters/" if method == "POST" else f"/api/v1/characters/{own.character.id}/"
    before = db_snapshot()
    assert "model_config" in error_locs(_call(api, method, path, body))
    assert snapshot_diff(before, db_snapshot()) == []


def test_rollback_cannot_reach_another_tenants_messages(api, own, foreign):
    """Timestamps are only matched inside the caller's own conversation."""
    from memory.models import Message

    stamps = [m.ts for m in foreign.messages]
    response = api.post(
        f"/api/v1/conversations/{own.conversation.id}/messages/rollback",
        {"timestamps": stamps},
        format="json",
    )
    assert response.status_code == 200
    assert Message.objects.filter(tenant=foreign.tenant).count() == len(foreign.messages)
