"""``console.owners`` and ``memory.runtime``: the ports through which Memory's and Story's
doors (``memory.api``, ``memory.views``, ``story.api``, ``story.views``) reach the runtime's
conversations, characters and services without importing the runtime."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.http import Http404

from console import owners
from console.ports import Port
from memory import runtime
from story.api import StoryQuarantineViewSet

ROOT = Path(__file__).resolve().parents[2]
DOORS = ["memory/api", "memory/views", "memory/urls.py", "story/api.py", "story/views.py",
         "story/reads.py", "story/quarantine.py", "story/urls.py"]  # fmt: skip


def test_a_port_with_nothing_registered_is_refused():
    with pytest.raises(LookupError, match="test.port"):
        Port("test.port").get()


def test_the_runtime_registers_what_the_doors_ask_when_it_is_ready():
    from roleplay.memory_plugin.services import claims, consolidation
    from roleplay.models import Character, Conversation

    assert owners.conversation_model() is Conversation
    assert owners.character_model() is Character
    assert runtime.runtime().prepare is claims.prepare
    assert runtime.runtime().commit is claims.commit
    assert runtime.runtime().request_consolidation is consolidation.request_runs
    assert StoryQuarantineViewSet.model is Conversation  # read on the class, as routers do


def _imported(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_memorys_and_storys_doors_import_no_runtime_module():
    files = [
        p for d in DOORS for p in ((ROOT / d).rglob("*.py") if (ROOT / d).is_dir() else [ROOT / d])
    ]
    assert len(files) > 10
    for path in files:
        runtime_imports = {m for m in _imported(path) if m.split(".")[0] == "roleplay"}
        assert runtime_imports == set(), path


@pytest.mark.django_db
def test_a_conversation_is_found_only_in_its_own_tenant(rf, tenant, other_tenant, conversation):
    request = rf.get("/")
    request.tenant = tenant
    assert owners.conversation_or_404(request, conversation.pk) == conversation
    for tenant_asking, pk in ((other_tenant, conversation.pk), (tenant, "not-an-id")):
        request.tenant = tenant_asking
        with pytest.raises(Http404):
            owners.conversation_or_404(request, pk)
