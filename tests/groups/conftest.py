"""A three-character group: Mira (the conversation's character), Jon and Ada."""

from __future__ import annotations

import pytest


@pytest.fixture
def jon(tenant):
    from roleplay.models import Character

    return Character.objects.create(
        tenant=tenant, name="Jon", description="A fisherman with a loud laugh.\n\nMore.",
        personality="gruff", example_dialogues="<START>\nJon: Ha!",
    )  # fmt: skip


@pytest.fixture
def ada(tenant):
    from roleplay.models import Character

    return Character.objects.create(tenant=tenant, name="Ada", description="A mapmaker.")


@pytest.fixture
def group(conversation, jon, ada):
    from roleplay.groups import services

    services.add_member(conversation, jon)
    services.add_member(conversation, ada)
    return conversation
