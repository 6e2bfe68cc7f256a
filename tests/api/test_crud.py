"""Happy paths of every resource: list, create, retrieve, update, partial update, delete."""

from __future__ import annotations

import uuid

import pytest

from tests.api.helpers import assert_error

MODEL_CONFIG_FIELDS = {
    "id", "name", "provider", "model", "base_url", "api_key_env", "api_key_configured",
    "context_limit", "max_output_tokens", "temperature", "top_p", "timeout_ms", "extra",
    "role_order", "prompt_cache", "cache", "preset", "is_default", "is_demo", "created_at",
    "updated_at", "wire", "instruct_template", "top_k", "min_p", "typical_p",
    "repetition_penalty", "repetition_penalty_range", "dry_multiplier", "dry_base",
    "dry_allowed_length", "xtc_threshold", "xtc_probability", "mirostat_mode", "mirostat_tau",
    "mirostat_eta", "tokenizer", "tokenizer_sha256",  # the budgets' tokenizer (docs/llm.md)
}  # fmt: skip
CHARACTER_FIELDS = {
    "id", "name", "description", "personality", "scenario", "first_message",
    "alternate_greetings", "example_dialogues", "system_prompt", "post_history_instructions",
    "creator_notes", "tags", "creator", "character_version", "extensions", "model_config",
    "author_note", "default_scenario", "has_avatar", "avatar_url", "created_at", "updated_at",
    "visibility", "content_rating",  # who sees it in the player app (docs/players.md)
}  # fmt: skip
PLAYER_FIELDS = {"id", "external_id", "display_name", "created_at"}
PERSONA_FIELDS = {
    "id", "player", "name", "description", "is_default", "has_avatar", "avatar_url",
    "created_at", "updated_at",
}  # fmt: skip
CONVERSATION_FIELDS = {
    "id", "player", "character", "model_config", "persona", "greeting_index", "greeting", "title",
    "status", "author_note", "scenario", "parent", "fork_message_id", "created_at", "updated_at",
    "group_mode", "join_cards", "allow_self_responses", "auto_turns", "auto_delay_ms",  # a group's
}  # fmt: skip


def _bodies(own):
    """(collection, fields, create body, full update body, patch body) per resource."""
    return {
        "model-configs": (
            MODEL_CONFIG_FIELDS,
            {
                "name": "gpt",
                "provider": "openai_compatible",
                "model": "gpt-x",
                "base_url": "http://127.0.0.1:9/v1",
                "api_key_env": "OPENAI_API_KEY",
                "context_limit": 8192,
                "max_output_tokens": 512,
                "extra": {"top_k": 40},
            },
            {"name": "local", "provider": "llama_cpp", "model": "gemma", "context_limit": 2048,
             "max_output_tokens": 128},
            {"temperature": 0.2},
        ),
        "characters": (
            CHARACTER_FIELDS,
            {"name": "Iris", "description": "A cartographer.",
             "model_config": str(own.model_config.id)},
            {"name": "Iris II", "first_message": "Hello.", "model_config": None},
            {"example_dialogues": "<START>", "visibility": "listed", "content_rating": "nsfw"},
        ),
        "players": (
            PLAYER_FIELDS,
            {"external_id": "user-42", "display_name": "Bo"},
            {"external_id": "user-43"},
            {"display_name": "Bob"},
        ),
        "personas": (
            PERSONA_FIELDS,
            {"player": own.player.id, "name": "Sailor", "description": "Salt and rope."},
            {"player": own.player.id, "name": "Sailor II", "description": ""},
            {"is_default": True},
        ),
        "conversations": (
            CONVERSATION_FIELDS,
            {"player": own.player.id, "character": str(own.character.id), "title": "First",
             "group_mode": "pooled", "auto_turns": 2},
            {"player": own.player.id, "character": str(own.character.id), "title": "Renamed",
             "model_config": str(own.model_config.id)},
            {"status": "archived"},
        ),
    }  # fmt: skip


RESOURCES = ["model-configs", "characters", "players", "personas", "conversations"]


@pytest.mark.parametrize("resource", RESOURCES)
def test_full_lifecycle(api, own, resource):
    fields, create, update, patch = _bodies(own)[resource]
    base = f"/api/v1/{resource}/"

    created = api.post(base, create, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert set(body) == fields
    for key, value in create.items():
        assert str(body[key]) == str(value), key
    item = f"{base}{body['id']}/"

    listed = api.get(base)
    assert listed.status_code == 200
    page = listed.json()
    assert set(page) == {"count", "next", "previous", "results"}
    assert body["id"] in [row["id"] for row in page["results"]]
    assert all(set(row) == fields for row in page["results"])

    fetched = api.get(item)
    assert fetched.status_code == 200 and fetched.json() == body

    replaced = api.put(item, update, format="json")
    assert replaced.status_code == 200, replaced.content
    for key, value in update.items():
        assert replaced.json()[key] == (
            value if value is None else type(replaced.json()[key])(value)
        )

    patched = api.patch(item, patch, format="json")
    assert patched.status_code == 200, patched.content
    for key, value in patch.items():
        assert patched.json()[key] == value
    assert api.get(item).json() == patched.json()

    deleted = api.delete(item)
    assert deleted.status_code == 204 and deleted.content == b""
    assert_error(api.get(item), 404, "not_found")


@pytest.mark.parametrize("resource", RESOURCES)
def test_routes_answer_with_and_without_trailing_slash(api, own, resource):
    obj = {
        "model-configs": own.model_config,
        "characters": own.character,
        "players": own.player,
        "personas": own.persona,
        "conversations": own.conversation,
    }[resource]
    for path in (f"/api/v1/{resource}", f"/api/v1/{resource}/{obj.id}"):
        for suffix in ("", "/"):
            response = api.get(path + suffix)
            assert response.status_code == 200, (path + suffix, response.status_code)


def test_list_is_paginated_with_limit_and_offset(api, tenant):
    from console.models import Player

    for i in range(7):
        Player.objects.create(tenant=tenant, external_id=f"p{i}")
    first = api.get("/api/v1/players/?limit=3").json()
    second = api.get("/api/v1/players/?limit=3&offset=3").json()
    assert first["count"] == 7 and len(first["results"]) == 3 and first["next"]
    assert not {r["id"] for r in first["results"]} & {r["id"] for r in second["results"]}
    # Nonsense pagination parameters are a 400 naming the parameter, not a silent default.
    assert_error(api.get("/api/v1/players/?limit=abc&offset=-4"), 400, "validation_error")


def test_newest_first(api, tenant):
    from roleplay.models import Character

    for name in ("old", "mid", "new"):
        Character.objects.create(tenant=tenant, name=name)
    names = [row["name"] for row in api.get("/api/v1/characters/").json()["results"]]
    assert names == ["new", "mid", "old"]


def test_duplicate_player_external_id_is_a_conflict(api, player):
    from console.models import Player

    response = api.post("/api/v1/players/", {"external_id": player.external_id}, format="json")
    assert assert_error(response, 409, "duplicate")["details"] == {"field": "external_id"}
    assert Player.objects.filter(external_id=player.external_id).count() == 1
    # The failed insert did not poison the request's connection: the next call works.
    assert api.post("/api/v1/players/", {"external_id": "fresh"}, format="json").status_code == 201


def test_duplicate_model_config_name_on_update_is_a_conflict(api, own, tenant, llm):
    from roleplay.models import ModelConfig

    other = ModelConfig.objects.create(
        tenant=tenant, name="second", provider="llama_cpp", model="m", context_limit=2048,
        max_output_tokens=64,
    )  # fmt: skip
    response = api.patch(
        f"/api/v1/model-configs/{other.id}/", {"name": own.model_config.name}, format="json"
    )
    assert assert_error(response, 409, "duplicate")["details"] == {"field": "name"}
    other.refresh_from_db()
    assert other.name == "second"


def test_conversation_defaults(api, own):
    response = api.post(
        "/api/v1/conversations/",
        {"player": own.player.id, "character": str(own.character.id)},
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "active" and body["title"] == "" and body["model_config"] is None
    uuid.UUID(body["id"])


def test_deleting_a_character_removes_its_conversations(api, own):
    from roleplay.models import Conversation

    assert api.delete(f"/api/v1/characters/{own.character.id}/").status_code == 204
    assert not Conversation.objects.filter(pk=own.conversation.pk).exists()


def test_read_only_fields_are_ignored_on_write(api, own):
    response = api.patch(
        f"/api/v1/model-configs/{own.model_config.id}/",
        {"is_demo": True, "created_at": "2000-01-01T00:00:00Z"},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["is_demo"] is False
    assert not response.json()["created_at"].startswith("2000")
