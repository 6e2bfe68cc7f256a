"""The play page of a group: each reply under its speaker's name and avatar, and the
member list with Speak and Mute for writers."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from console.services import ensure_console_user
from memory import services as message_store

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(tenant):
    user, _ = ensure_console_user(tenant, "op", "pw-op-123456789", "operator")
    client = Client()
    client.force_login(user)
    return client


def test_replies_show_their_speaker_and_the_page_lists_the_members(operator, group, jon):
    tenant, session = group.tenant, group.session_id
    message_store.save_message(tenant, session, role="user", content="Hi all")
    reply = message_store.save_message(
        tenant, session, role="assistant", content="Ha!",
        metadata={"speaker": {"id": str(jon.pk), "name": "Jon"}},
    )  # fmt: skip
    page = operator.get(f"/play/{group.id}/").content.decode()
    item = page[page.index(f'data-id="{reply.id}"') :]
    item = item[: item.index("</li>")]
    assert f'data-speaker="{jon.pk}"' in item and '<b class="who">Jon</b>' in item
    assert f"/console/characters/{jon.pk}/avatar/" in item
    members = re.search(r'<aside class="group-members".*?</aside>', page, re.S).group(0)
    assert re.findall(r'data-name="([^"]+)"', members) == ["Mira", "Jon", "Ada"]
    assert members.count("member-speak") == 3 and members.count("member-mute") == 3


def test_a_one_character_chat_has_no_member_list(operator, conversation):
    page = operator.get(f"/play/{conversation.id}/").content.decode()
    assert "group-members" not in page
