"""The doors: REST, management commands, the nightly task and the console page, each through
the one service; bad archives refused with a stable code and nothing changed."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from console.backup import storage
from console.backup.services import create_backup, nightly_backups
from console.models import Tenant
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff

from .conftest import export_bytes
from .test_restore_rules import row_counts

pytestmark = pytest.mark.django_db

GOOD_MANIFEST = {
    "format": "roleplay-tenant-backup",
    "version": 1,
    "tables": {},
    "files": {},
    "source_tenant": {"id": "11111111-2222-4333-8444-555555555555"},
}


def zipped(entries: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return out.getvalue()


BAD_ARCHIVES = {
    "not-zip": (b"hello, not a zip", 400, "archive_invalid"),
    "truncated": (
        zipped([("manifest.json", json.dumps(GOOD_MANIFEST).encode())])[:-30],
        400,
        "archive_invalid",
    ),
    "traversal": (
        zipped([("manifest.json", b"{}"), ("../../etc/passwd", b"x")]),
        400,
        "archive_invalid",
    ),
    "absolute": (zipped([("manifest.json", b"{}"), ("/etc/passwd", b"x")]), 400, "archive_invalid"),
    "backslash": (
        zipped([("manifest.json", b"{}"), ("tables\\x.jsonl", b"x")]),
        400,
        "archive_invalid",
    ),
    "version": (
        zipped([("manifest.json", json.dumps({**GOOD_MANIFEST, "version": 99}).encode())]),
        400,
        "archive_version",
    ),
    "nul": (
        zipped(
            [
                (
                    "manifest.json",
                    json.dumps(
                        {**GOOD_MANIFEST, "tables": {"roleplay.Preset": {"rows": 1}}}
                    ).encode(),
                ),
                ("tables/roleplay.Preset.jsonl", b'{"name": "a\\u0000"}\n'),
            ]
        ),
        400,
        "archive_invalid",
    ),
    "huge-number": (
        zipped(
            [
                (
                    "manifest.json",
                    json.dumps(
                        {**GOOD_MANIFEST, "tables": {"roleplay.Preset": {"rows": 1}}}
                    ).encode(),
                ),
                ("tables/roleplay.Preset.jsonl", b'{"n": ' + b"9" * 5000 + b"}\n"),
            ]
        ),
        400,
        "archive_invalid",
    ),
}


def upload(client, data: bytes):
    return client.post(
        "/api/v1/backups/restore", {"file": SimpleUploadedFile("b.zip", data)}, format="multipart"
    )


def test_rest_round_trip_create_list_download_restore(full_tenant, make_tenant, api_client_for):
    source = api_client_for(full_tenant.tenant)
    created = source.post("/api/v1/backups", format="json")
    assert created.status_code == 201, created.content
    listed = source.get("/api/v1/backups").json()
    assert [b["id"] for b in listed["results"]] == [created.json()["id"]] and listed["keep"] == 7
    download = source.get(created.json()["download"])
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    archive = b"".join(download.streaming_content)

    target = make_tenant("restored")
    answer = upload(api_client_for(target), archive)
    assert answer.status_code == 201, answer.content
    assert answer.json()["tenant"] == str(target.pk)
    assert row_counts(target) == row_counts(full_tenant.tenant)


def test_rest_restore_into_a_non_empty_tenant_is_409_and_changes_nothing(
    full_tenant, api_client_for
):
    client = api_client_for(full_tenant.tenant)
    data = export_bytes(full_tenant.tenant)
    before = db_snapshot()
    assert_error(upload(client, data), 409, "tenant_not_empty")
    assert snapshot_diff(before, db_snapshot()) == []


@pytest.mark.parametrize("case", sorted(BAD_ARCHIVES))
def test_rest_bad_archives_are_coded_4xx_and_change_nothing(case, make_tenant, api_client_for):
    data, status, code = BAD_ARCHIVES[case]
    client = api_client_for(make_tenant("empty"))
    before = db_snapshot()
    assert_error(upload(client, data), status, code)
    assert snapshot_diff(before, db_snapshot()) == []


def test_a_foreign_tenants_backup_is_404(tenant, other_tenant, api_client_for):
    theirs = create_backup(other_tenant)
    client = api_client_for(tenant)
    assert_error(client.get(f"/api/v1/backups/{theirs.id}/download"), 404, "not_found")
    assert_error(client.get("/api/v1/backups/..%2F..%2Fx/download"), 404, "not_found")
    assert client.get("/api/v1/backups").json()["results"] == []


@pytest.mark.parametrize("scope", ["content", "play"])
def test_backups_need_the_admin_scope(tenant, api_client_for, scope):
    client = api_client_for(tenant, [scope])
    assert client.get("/api/v1/backups").status_code == 403
    assert client.post("/api/v1/backups", format="json").status_code == 403


def test_commands_export_and_restore_into_a_new_tenant(full_tenant, tmp_path, capsys):
    path = tmp_path / "t.zip"
    call_command("backup_tenant", full_tenant.tenant.name, "-o", str(path))
    call_command("restore_tenant", str(path), "--tenant-name", "from-command")
    new = Tenant.objects.get(name="from-command")
    assert str(new.pk) in capsys.readouterr().out
    assert row_counts(new) == row_counts(full_tenant.tenant)


def test_command_restore_of_a_bad_archive_leaves_no_tenant(tmp_path):
    path = tmp_path / "bad.zip"
    path.write_bytes(BAD_ARCHIVES["traversal"][0])
    with pytest.raises(CommandError, match="archive_invalid"):
        call_command("restore_tenant", str(path), "--tenant-name", "never")
    assert not Tenant.objects.filter(name="never").exists()


def test_the_nightly_task_is_scheduled_and_keeps_the_newest(settings, tenant, other_tenant):
    from console.tasks import nightly_backups as task

    assert settings.CELERY_BEAT_SCHEDULE["nightly-backups"]["task"] == task.name
    settings.BACKUP_KEEP = 3
    made = [nightly_backups()[str(tenant.pk)] for _ in range(5)]
    kept = [b.id for b in storage.list_backups(tenant)]
    assert sorted(kept) == sorted(made[-3:])
    assert len(storage.list_backups(other_tenant)) == 3


def test_console_page_lists_copies_and_downloads_one_click(tenant, character):
    from console.services import ensure_console_user

    admin, _ = ensure_console_user(tenant, "boss", "pw-boss-123456", "admin")
    viewer, _ = ensure_console_user(tenant, "eye", "pw-eye-123456", "viewer")
    client = Client()
    client.force_login(admin)
    response = client.post("/console/backups/now/")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as zf:
        assert "tables/roleplay.Character.jsonl" in zf.namelist()
    page = client.get("/console/backups/")
    stored = storage.list_backups(tenant)[0]
    assert stored.id in page.content.decode()
    assert client.get(f"/console/backups/{stored.id}/download/").status_code == 200
    assert client.get("/console/backups/nope/download/").status_code == 404
    viewing = Client()
    viewing.force_login(viewer)
    assert viewing.get("/console/backups/").status_code in (302, 403)


def test_rest_restore_of_rows_naming_absent_rows_is_400_and_changes_nothing(
    full_tenant, make_tenant, api_client_for
):
    from .test_restore_rules import rewrite

    def drop_characters(name, raw):
        if name == "tables/roleplay.Character.jsonl":
            return b""
        if name == "manifest.json":
            manifest = json.loads(raw)
            manifest["tables"]["roleplay.Character"]["rows"] = 0
            return json.dumps(manifest).encode()
        return raw

    data = rewrite(export_bytes(full_tenant.tenant), drop_characters)
    client = api_client_for(make_tenant("empty"))
    before = db_snapshot()
    assert_error(upload(client, data), 400, "archive_dangling_reference")
    assert snapshot_diff(before, db_snapshot()) == []


def test_logs_of_an_export_and_a_restore_carry_no_row_content(full_tenant, make_tenant, caplog):
    from console.backup.restore import restore_archive

    with caplog.at_level("DEBUG"):
        restore_archive(export_bytes(full_tenant.tenant), make_tenant("restored"))
    text = caplog.text + " ".join(str(r.__dict__) for r in caplog.records)
    assert "backup.exported" in text and "backup.restored" in text
    for secret in ("SOME_KEY_ENV", full_tenant.raw_token, "src-char", "src 0"):
        assert secret not in text


def test_rest_restore_replays_with_the_same_idempotency_key(
    full_tenant, make_tenant, api_client_for
):
    data = export_bytes(full_tenant.tenant)
    client = api_client_for(make_tenant("empty"))
    first = client.post(
        "/api/v1/backups/restore", {"file": SimpleUploadedFile("b.zip", data)},
        format="multipart", HTTP_IDEMPOTENCY_KEY="restore-1",
    )  # fmt: skip
    again = client.post(
        "/api/v1/backups/restore", {"file": SimpleUploadedFile("b.zip", data)},
        format="multipart", HTTP_IDEMPOTENCY_KEY="restore-1",
    )  # fmt: skip
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
