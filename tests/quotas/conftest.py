"""Plans and quotas: a plan maker and many conversations of one player."""

from __future__ import annotations

import pytest

from tests.accounts.conftest import (  # noqa: F401 - the player app's fixtures
    app_tenant,
    make_account,
    player_client,
    sign_in,
)
from tests.api.conftest import own  # noqa: F401 - a tenant's whole object graph


@pytest.fixture
def make_plan(tenant):
    from roleplay.quotas import services

    def make(name: str = "Free", **limits):
        return services.create_plan(tenant, name=name, **limits)

    return make


@pytest.fixture
def give_plan(make_plan):
    """``give_plan(player, **limits)``: a new plan with these limits, given to ``player``."""
    from roleplay.quotas import services

    counter = iter(range(1, 1000))

    def give(player, **limits):
        plan = make_plan(f"plan-{next(counter)}", **limits)
        services.assign_plan(player, plan)
        return plan

    return give


@pytest.fixture
def conversations(tenant, player, character, model_config):
    """``conversations(n)``: n conversations of ``player`` with ``character``."""
    from roleplay.models import Conversation

    def make(n: int):
        return [
            Conversation.objects.create(tenant=tenant, player=player, character=character)
            for _ in range(n)
        ]

    return make
