"""Export a full tenant, restore it into a new one: every table's count and content hash
equal with ids mapped back, every id new, nothing pointing at the source."""

from __future__ import annotations

import pytest

from console.backup import verify
from console.backup.restore import restore_archive
from console.backup.tables import tenant_tables

from .conftest import export_bytes

pytestmark = pytest.mark.django_db


def test_restore_gives_equal_counts_and_hashes_with_new_ids(full_tenant, make_tenant):
    source = full_tenant.tenant
    data = export_bytes(source)
    target = make_tenant("restored-tenant")

    restored = restore_archive(data, target)

    checks = verify.compare_tenants(source, target, restored.ids)
    unequal = [(c.label, c.source_rows, c.restored_rows) for c in checks if not c.equal]
    assert unequal == []
    filled = [c.label for c in checks if c.source_rows]
    assert len(filled) >= 45, filled
    for table in tenant_tables():
        olds = set(
            table.model._base_manager.filter(**{table.tenant_path: source}).values_list(
                "pk", flat=True
            )
        )
        news = set(
            table.model._base_manager.filter(**{table.tenant_path: target}).values_list(
                "pk", flat=True
            )
        )
        if not table.pk.is_relation:
            assert not olds & news, table.label


def test_ids_inside_json_name_the_restored_rows(full_tenant, make_tenant):
    from memory.models import ConsolidationRun
    from roleplay.models import AgentLedgerEntry, ModelCall, PlanningRun

    target = make_tenant("restored-tenant")
    restored = restore_archive(export_bytes(full_tenant.tenant), target)

    run = PlanningRun.objects.get(tenant=target)
    ledger = set(AgentLedgerEntry.objects.filter(tenant=target).values_list("pk", flat=True))
    assert ledger and set(run.snapshot["inputs"]["entry_ids"]) == ledger
    consolidation = ConsolidationRun.objects.get(tenant=target)
    assert consolidation.model_call_ids == [ModelCall.objects.get(tenant=target).pk]
    assert consolidation.session_id == str(consolidation.conversation_id)
    assert consolidation.entry_ids and consolidation.entry_ids[0] in restored.ids.uuids.values()
    source_ids = {str(full_tenant.tenant.pk), *restored.ids.uuids}
    for label in ("roleplay.Conversation", "memory.Message", "roleplay.Turn", "story.StoryEvent"):
        table = next(t for t in tenant_tables() if t.label == label)
        text = str(list(table.model._base_manager.filter(tenant=target).values()))
        assert not any(old in text for old in source_ids), label


def test_image_files_travel_under_the_new_tenant(full_tenant, make_tenant):
    from images import files as image_files
    from images.models import ImageSlot

    source_slot = ImageSlot.objects.get(tenant=full_tenant.tenant)
    assert source_slot.file
    target = make_tenant("restored-tenant")
    restore_archive(export_bytes(full_tenant.tenant), target)
    slot = ImageSlot.objects.get(tenant=target)
    assert slot.file.startswith(f"{target.pk}/") and slot.file != source_slot.file
    storage = image_files.storage()
    with storage.open(slot.file) as new, storage.open(source_slot.file) as old:
        assert new.read() == old.read()


def test_trigger_kept_recall_counts_are_rebuilt_by_the_restored_rows(full_tenant, make_tenant):
    from memory.models import RecallTerm

    def terms(tenant):
        return sorted(
            RecallTerm.objects.filter(tenant=tenant).values_list("term", "df", "length_sum")
        )

    assert terms(full_tenant.tenant)
    target = make_tenant("restored-tenant")
    restore_archive(export_bytes(full_tenant.tenant), target)
    assert terms(target) == terms(full_tenant.tenant)


def test_agent_state_reads_the_same_in_the_restored_conversation(full_tenant, make_tenant):
    from roleplay.agentic.services.agent_state import read_state
    from roleplay.models import Conversation, Scenario

    world = full_tenant.objects
    before = read_state(world.conversation, world.scenario)
    target = make_tenant("restored-tenant")
    restored = restore_archive(export_bytes(full_tenant.tenant), target)
    conversation = Conversation.objects.get(pk=restored.ids.uuids[str(world.conversation.pk)])
    scenario = Scenario.objects.get(pk=restored.ids.uuids[str(world.scenario.pk)])
    after = read_state(conversation, scenario)
    assert before.found and after.found
    assert (after.revision, after.state, after.tools_called) == (
        before.revision, before.state, before.tools_called,
    )  # fmt: skip
    assert after.source_message_id == restored.ids.uuids[before.source_message_id]
    assert [e["key"] for e in after.ledger] == [e["key"] for e in before.ledger]
