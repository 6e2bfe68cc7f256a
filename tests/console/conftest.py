"""Console fixtures: one logged-in client per role, and a second tenant's objects."""

from __future__ import annotations

import pytest
from django.test import Client

from console.services import create_api_token, ensure_console_user


def _client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def admin_user(tenant):
    user, _ = ensure_console_user(tenant, "boss", "pw-boss-123456", "admin")
    return user


@pytest.fixture
def viewer_user(tenant):
    user, _ = ensure_console_user(tenant, "eye", "pw-eye-123456", "viewer")
    return user


@pytest.fixture
def admin_client(admin_user):
    return _client_for(admin_user)


@pytest.fixture
def operator_client(operator_user):
    return _client_for(operator_user)


@pytest.fixture
def viewer_client(viewer_user):
    return _client_for(viewer_user)


@pytest.fixture
def foreign(other_tenant, llm):
    """A second tenant's character, player, model config, conversation and API token."""
    from console.models import Player
    from roleplay.models import Character, Conversation, ModelConfig

    config = ModelConfig.objects.create(
        tenant=other_tenant,
        name="theirs",
        provider="openai_compatible",
        model="scripted-model",
        base_url=llm.base_url,
    )
    character = Character.objects.create(tenant=other_tenant, name="Stranger")
    player = Player.objects.create(tenant=other_tenant, external_id="x-1")
    conversation = Conversation.objects.create(
        tenant=other_tenant, player=player, character=character
    )
    token, _raw = create_api_token(other_tenant, "theirs", ["content"])
    return {
        "config": config,
        "character": character,
        "player": player,
        "conversation": conversation,
        "token": token,
    }
