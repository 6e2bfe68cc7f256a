from __future__ import annotations

import pytest

from memory import services as message_store


def say(tenant, conversation, *texts):
    """Store ``texts`` in the conversation, alternating player and character from the first."""
    return [
        message_store.save_message(
            tenant,
            conversation.session_id,
            role="user" if i % 2 == 0 else "assistant",
            content=text,
        )
        for i, text in enumerate(texts)
    ]


@pytest.fixture
def history(tenant, conversation):
    """Six messages: u0 a1 u2 a3 u4 a5."""
    return say(tenant, conversation, "u0", "a1", "u2", "a3", "u4", "a5")


def base(conversation) -> str:
    return f"/api/v1/conversations/{conversation.id}"


@pytest.fixture
def other_api(api_client_for, other_tenant):
    """A client of another tenant: every object of ours is a 404 to it."""
    return api_client_for(other_tenant)
