"""Characters in full: every card field through the API, the console form and the services,
with the limits of the list and JSON fields enforced at every door."""

from __future__ import annotations

import pytest

from roleplay.characters.cards import limits
from roleplay.characters.services import characters
from roleplay.errors import FieldErrors
from roleplay.models import Character
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff

pytestmark = pytest.mark.django_db

FULL = {
    "name": "Mira",
    "description": "Keeper of the lighthouse.",
    "personality": "Dry-humoured.",
    "scenario": "A foggy night.",
    "first_message": "A visitor?",
    "alternate_greetings": ["The lamp needs trimming.", "You again?"],
    "example_dialogues": "<START>",
    "system_prompt": "You are {{char}}.",
    "post_history_instructions": "Stay in character.",
    "creator_notes": "Slow scenes.",
    "tags": ["lighthouse", "fantasy"],
    "creator": "anon",
    "character_version": "1.2",
    "extensions": {"talkativeness": "0.5", "unknown_tool": {"deep": [1, {"x": None}]}},
}


def test_every_field_round_trips_through_the_api(api):
    created = api.post("/api/v1/characters/", FULL, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert {key: body[key] for key in FULL} == FULL
    assert body["has_avatar"] is False
    assert body["avatar_url"] == f"/api/v1/characters/{body['id']}/avatar"
    fetched = api.get(f"/api/v1/characters/{body['id']}/").json()
    assert {key: fetched[key] for key in FULL} == FULL
    patched = api.patch(
        f"/api/v1/characters/{body['id']}/", {"tags": [], "alternate_greetings": []}, format="json"
    )
    assert patched.status_code == 200
    assert (patched.json()["tags"], patched.json()["alternate_greetings"]) == ([], [])


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("alternate_greetings", ["x"] * (limits.MAX_GREETINGS + 1)),
        ("alternate_greetings", ["x" * (limits.MAX_GREETING_CHARS + 1)]),
        ("alternate_greetings", "not a list"),
        ("alternate_greetings", [1]),
        ("tags", ["x" * (limits.MAX_TAG_CHARS + 1)]),
        ("tags", ["t"] * (limits.MAX_TAGS + 1)),
        ("tags", [""]),
        ("extensions", ["not", "an", "object"]),
        ("extensions", {"big": "x" * limits.MAX_EXTENSIONS_BYTES}),
        ("personality", "x" * 20_001),
        ("scenario", 42),
        ("creator", "x" * 201),
        ("character_version", "x" * 101),
    ],
)
def test_out_of_bounds_values_are_refused_and_nothing_written(api, field, value):
    before = db_snapshot()
    error = assert_error(
        api.post("/api/v1/characters/", {"name": "M", field: value}, format="json"),
        400,
        "validation_error",
    )
    assert any(item["loc"].split(".")[0] == field for item in error["details"]["errors"])
    assert snapshot_diff(before, db_snapshot()) == []


def test_extensions_nested_too_deep_are_refused(api):
    deep: dict = {}
    node = deep
    for _ in range(limits.MAX_EXTENSIONS_DEPTH + 1):
        node["a"] = {}
        node = node["a"]
    response = api.post("/api/v1/characters/", {"name": "M", "extensions": deep}, format="json")
    assert_error(response, 400, "validation_error")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("alternate_greetings", ["ok", 3]),
        ("tags", ["x" * (limits.MAX_TAG_CHARS + 1)]),
        ("extensions", {"a": "nul\x00byte"}),
        ("extensions", {"nul\x00key": 1}),
        ("extensions", "text"),
    ],
)
def test_the_service_enforces_the_same_rules_for_every_door(tenant, field, value):
    with pytest.raises(FieldErrors) as caught:
        characters.create_character(tenant, name="M", **{field: value})
    assert field in caught.value.by_field
    assert not Character.objects.filter(tenant=tenant).exists()


def test_none_lists_and_extensions_become_empty(tenant):
    character = characters.create_character(
        tenant, name="M", alternate_greetings=None, tags=None, extensions=None
    )
    assert (character.alternate_greetings, character.tags, character.extensions) == ([], [], {})


def test_the_console_form_edits_every_field(operator_client, tenant):
    response = operator_client.post(
        "/console/characters/new/",
        {
            **{k: v for k, v in FULL.items() if k not in ("alternate_greetings", "tags")},
            "extensions": '{"talkativeness": "0.5"}',
            "alternate_greetings": ["First alt.\r\nSecond line.", "", "  ", "Second alt."],
            "tags": "lighthouse, fantasy, lighthouse, ",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    mira = Character.objects.get(tenant=tenant, name="Mira")
    assert mira.alternate_greetings == ["First alt.\nSecond line.", "Second alt."]
    assert mira.tags == ["lighthouse", "fantasy"]
    assert mira.extensions == {"talkativeness": "0.5"}
    assert mira.system_prompt == FULL["system_prompt"]
    assert mira.post_history_instructions == FULL["post_history_instructions"]

    page = operator_client.get(f"/console/characters/{mira.pk}/").content.decode()
    assert 'name="alternate_greetings"' in page and "Second alt.</textarea>" in page
    assert 'value="lighthouse, fantasy"' in page
    assert "data-list-add" in page and "js/characters.js" in page


def test_the_console_form_shows_the_services_errors(operator_client, tenant):
    response = operator_client.post(
        "/console/characters/new/",
        {"name": "Mira", "tags": ", ".join(f"t{i}" for i in range(limits.MAX_TAGS + 1))},
    )
    assert response.status_code == 200
    assert "at most 100 items" in response.content.decode()
    assert not Character.objects.filter(tenant=tenant).exists()


def test_extensions_must_be_json_in_the_console(operator_client, tenant):
    response = operator_client.post(
        "/console/characters/new/", {"name": "Mira", "extensions": "{not json"}
    )
    assert response.status_code == 200 and not Character.objects.filter(tenant=tenant).exists()


def test_a_viewer_sees_the_fields_read_only(viewer_client, character):
    page = viewer_client.get(f"/console/characters/{character.pk}/").content.decode()
    assert "Read only" in page and "data-list-add" not in page
