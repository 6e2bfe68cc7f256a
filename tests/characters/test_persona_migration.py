"""The data migration: ``Player.persona`` text becomes each player's default Persona, and
going back puts it in the text field again."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("console", "0003_audit_event"), ("roleplay", "0005_character_import")]
AFTER = [("console", "0004_remove_player_persona"), ("roleplay", "0006_player_personas")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def at_the_old_schema():
    apps = migrate(BEFORE)
    try:
        yield apps
    finally:
        migrate(executor_leaves())


def executor_leaves():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


def test_player_persona_text_becomes_a_default_persona(at_the_old_schema):
    apps = at_the_old_schema
    Tenant = apps.get_model("console", "Tenant")
    Player = apps.get_model("console", "Player")
    tenant = Tenant.objects.create(name="migrating")
    sailor = Player.objects.create(
        tenant=tenant, external_id="p1", display_name="Bo", persona="A sailor."
    )
    nameless = Player.objects.create(tenant=tenant, external_id="p2", persona="A ghost.")
    empty = Player.objects.create(tenant=tenant, external_id="p3", display_name="Cy")

    apps = migrate(AFTER)
    Persona = apps.get_model("roleplay", "Persona")
    rows = {
        p.player_id: (p.name, p.description, p.is_default, p.tenant_id)
        for p in Persona.objects.all()
    }
    assert rows == {
        sailor.pk: ("Bo", "A sailor.", True, tenant.pk),
        nameless.pk: ("p2", "A ghost.", True, tenant.pk),
    }
    assert empty.pk not in rows
    assert "persona" not in {f.name for f in apps.get_model("console", "Player")._meta.fields}

    apps = migrate(BEFORE)
    Player = apps.get_model("console", "Player")
    assert Player.objects.get(pk=sailor.pk).persona == "A sailor."
    assert Player.objects.get(pk=empty.pk).persona == ""
