"""A tenant holding a branch (and a branch of the branch): after a restore, each restored
branch's history is its original's, message for message, read through the restored lineage."""

from __future__ import annotations

import pytest

from console.backup.restore import restore_archive
from memory.selectors import get_history
from roleplay.branches.services import create_branch
from roleplay.models import Conversation

from .conftest import export_bytes

pytestmark = pytest.mark.django_db


def _texts(conversation) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in get_history(conversation.tenant, conversation.session_id)]


def test_a_restored_branch_reads_its_shared_history_through_the_restored_parent(
    full_tenant, make_tenant
):
    from memory import services as store

    world = full_tenant.objects
    parent = world.conversation
    shared = world.messages[1]
    branch = create_branch(parent, shared.id)
    store.save_message(world.tenant, branch.session_id, role="user", content="own line")
    grandchild = create_branch(branch, get_history(world.tenant, branch.session_id)[-1].id)
    store.save_message(world.tenant, grandchild.session_id, role="user", content="deeper line")
    assert len(_texts(branch)) == len(_texts(parent)[:2]) + 1

    target = make_tenant("restored-tenant")
    restore_archive(export_bytes(world.tenant), target)

    restored = {c.pk: c for c in Conversation.objects.filter(tenant=target)}
    new_branch = next(c for c in restored.values() if c.parent_id and c.parent.parent_id is None)
    new_grandchild = next(
        c for c in restored.values() if c.parent_id and c.parent.parent_id is not None
    )
    assert new_branch.parent_id in restored and new_grandchild.parent_id == new_branch.pk
    assert _texts(new_branch) == _texts(branch)
    assert _texts(new_grandchild) == _texts(grandchild)
    assert _texts(new_branch.parent) == _texts(parent)
