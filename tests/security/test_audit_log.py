"""The audit log's pages: tenant admins see their tenant's events, nobody else does."""

from __future__ import annotations

import pytest
from django.test import Client

from console.audit import record
from console.models import AuditAction, AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def events(tenant, other_tenant, demo):
    from console.services import ensure_console_user

    stranger, _ = ensure_console_user(other_tenant, "stranger", "pw-stranger-1234", "admin")
    record(AuditAction.LOGIN_FAILED, user=demo, details={"locked_out": False})
    record(AuditAction.LOGIN_FAILED, user=stranger, details={"locked_out": False})
    record(AuditAction.LOGIN_FAILED, details={"unknown_account": True})


def client_for(tenant, name, role):
    from console.services import ensure_console_user

    user, _ = ensure_console_user(tenant, name, "pw-123456789", role)
    client = Client()
    client.force_login(user)
    return client


def test_tenant_admins_see_only_their_tenants_events(events, tenant):
    page = client_for(tenant, "boss", "admin").get("/console/audit/")
    assert page.status_code == 200
    rows = page.content.decode().split('id="audit-events"')[1]
    assert rows.count('data-action="login.failed"') == 1
    assert rows.count('data-action="login.succeeded"') == 1  # boss's own login, just now
    assert "demo" in rows and "stranger" not in rows and "unknown_account" not in rows


@pytest.mark.parametrize("role", ["operator", "viewer"])
def test_other_roles_may_not_read_the_audit_log(events, tenant, role):
    assert client_for(tenant, "someone", role).get("/console/audit/").status_code == 403


def test_staff_read_every_event_in_django_admin_but_cannot_edit_it(events, django_user_model):
    staff = django_user_model.objects.create_superuser("root", password="pw-root-123456")
    client = Client()
    client.force_login(staff)
    listing = client.get("/admin/console/auditevent/")
    assert listing.status_code == 200
    assert "stranger" in listing.content.decode()
    assert client.get("/admin/console/auditevent/add/").status_code == 403
    event = AuditEvent.objects.first()
    assert (
        client.post(f"/admin/console/auditevent/{event.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    assert AuditEvent.objects.filter(pk=event.pk).exists()
