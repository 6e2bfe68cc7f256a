"""Moderation: a tenant with a policy, players with accounts, cases to act on."""

from __future__ import annotations

import pytest

from tests.accounts.conftest import (  # noqa: F401 - the player app's fixtures
    PASSWORD,
    app_tenant,
    make_account,
    player_client,
    sign_in,
)


@pytest.fixture
def policy(tenant):
    """``policy(rules=..., **fields)``: the tenant moderates turns with these rules."""
    from roleplay.moderation import services

    def make(rules=None, **fields):
        fields.setdefault("enabled", True)
        return services.set_policy(tenant, rules=rules or {}, **fields)

    return make


@pytest.fixture
def moderation_endpoint(tenant, llm):
    """A model config whose base URL is the scripted server's ``/v1/moderations``."""
    from roleplay.models import ModelConfig

    return ModelConfig.objects.create(
        tenant=tenant, name="moderation", provider="openai_compatible",
        model="omni-moderation-latest", base_url=llm.base_url, timeout_ms=5000,
    )  # fmt: skip


BLOCK_VIOLENCE = {
    "categories": {
        "violence": {"action": "block_input", "keywords": ["stab"], "patterns": [r"kill+s? \w+"]},
        "spam": {"action": "warn", "keywords": ["buy now"]},
        "gore": {"action": "hide_reply", "keywords": ["entrails"]},
    }
}
