"""Restore rules: an empty target only, one transaction, references checked, tables covered."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.apps import apps

from console.backup import tables as backup_tables
from console.backup.engine.errors import ArchiveRefused
from console.backup.errors import RestoreMismatch, TenantNotEmpty
from console.backup.restore import restore_archive
from console.backup.tables import EXCLUDED, reaching_models, tenant_tables

from .conftest import export_bytes

pytestmark = pytest.mark.django_db


def rewrite(data: bytes, change) -> bytes:
    """``data`` with ``change(name, bytes) -> bytes`` applied to each entry."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            dst.writestr(info.filename, change(info.filename, src.read(info)))
    return out.getvalue()


def row_counts(tenant) -> dict[str, int]:
    return {
        t.label: t.model._base_manager.filter(**{t.tenant_path: tenant}).count()
        for t in tenant_tables()
    }


def test_every_model_reaching_the_tenant_is_covered_or_excluded_with_a_reason():
    from console.models import Tenant

    covered = {t.label for t in tenant_tables()}
    reaching = {m._meta.label for m in reaching_models()}
    assert reaching - covered == set(EXCLUDED), "a tenant table is neither backed up nor excluded"
    assert all(reason for reason in EXCLUDED.values())
    owned = {
        m._meta.label
        for m in apps.get_models()
        if any(f.is_relation and f.related_model is Tenant for f in m._meta.concrete_fields)
    }
    assert owned <= covered | set(EXCLUDED)


def test_a_non_empty_target_is_409_and_nothing_is_written(full_tenant, make_tenant, character):
    data = export_bytes(full_tenant.tenant)
    target = character.tenant
    before = row_counts(target)
    with pytest.raises(TenantNotEmpty) as caught:
        restore_archive(data, target)
    assert caught.value.code == "tenant_not_empty" and caught.value.kind == "conflict"
    assert row_counts(target) == before


def test_a_row_naming_a_row_the_archive_lacks_is_refused(full_tenant, make_tenant):
    def drop_characters(name, raw):
        return b"" if name == "tables/roleplay.Character.jsonl" else raw

    def fix_manifest(name, raw):
        if name != "manifest.json":
            return raw
        manifest = json.loads(raw)
        manifest["tables"]["roleplay.Character"]["rows"] = 0
        return json.dumps(manifest).encode()

    data = rewrite(rewrite(export_bytes(full_tenant.tenant), drop_characters), fix_manifest)
    target = make_tenant("target")
    with pytest.raises(ArchiveRefused) as caught:
        restore_archive(data, target)
    assert caught.value.code == "archive_dangling_reference"
    assert sum(row_counts(target).values()) == 0


def test_an_altered_row_fails_the_hash_check_and_nothing_is_kept(full_tenant, make_tenant):
    def alter(name, raw):
        if name != "tables/roleplay.Preset.jsonl":
            return raw
        return raw.replace(b'"name":"src-preset"', b'"name":"altered"')

    data = rewrite(export_bytes(full_tenant.tenant), alter)
    target = make_tenant("target")
    with pytest.raises(RestoreMismatch) as caught:
        restore_archive(data, target)
    assert caught.value.details["tables"] == ["roleplay.Preset"]
    assert sum(row_counts(target).values()) == 0


def test_a_value_that_does_not_fit_its_column_is_a_coded_refusal(full_tenant, make_tenant):
    def huge(name, raw):
        if name != "tables/roleplay.ModelConfig.jsonl":
            return raw
        first, *rest = raw.splitlines()
        row = json.loads(first)
        row["context_limit"] = 10**30
        return b"\n".join([json.dumps(row).encode(), *rest]) + b"\n"

    target = make_tenant("target")
    with pytest.raises(ArchiveRefused):
        restore_archive(rewrite(export_bytes(full_tenant.tenant), huge), target)
    assert sum(row_counts(target).values()) == 0


def test_secrets_never_enter_the_archive(full_tenant, monkeypatch):
    from console.models import ApiToken

    data = export_bytes(full_tenant.tenant)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        text = b"".join(zf.read(n) for n in zf.namelist())
        manifest = json.loads(zf.read("manifest.json"))
    assert full_tenant.raw_token.encode() not in text
    for token in ApiToken.objects.filter(tenant=full_tenant.tenant):
        assert token.token_hash.encode() not in text
    assert "console.ApiToken" not in manifest["tables"]
    assert "never stored" in manifest["secrets"]
    assert b"SOME_KEY_ENV" in text  # the name of the variable travels, not a key


def test_tables_are_ordered_parents_first():
    order = [t.label for t in backup_tables.tenant_tables()]
    for table in backup_tables.tenant_tables():
        for target in table.fks.values():
            if target != table.label and target in order:
                assert order.index(target) < order.index(table.label) or table.label in (
                    "roleplay.Character",
                    "roleplay.Scenario",
                )


def test_a_row_naming_another_tenants_file_is_refused(full_tenant, make_tenant, other_tenant):
    victim = f"{other_tenant.pk}/generated/0123.png"

    def point_elsewhere(name, raw):
        if name != "tables/images.ImageSlot.jsonl":
            return raw
        rows = [json.loads(line) for line in raw.splitlines()]
        rows[0]["file"] = victim
        return b"\n".join(json.dumps(r).encode() for r in rows) + b"\n"

    data = rewrite(export_bytes(full_tenant.tenant), point_elsewhere)
    target = make_tenant("target")
    with pytest.raises(ArchiveRefused, match="outside the tenant"):
        restore_archive(data, target)
    assert sum(row_counts(target).values()) == 0
