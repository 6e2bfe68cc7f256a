"""The console's Lockouts page: an admin sees the locks that concern the tenant's accounts,
with the time left, and unlocks one; the unlock is audited, and another tenant's admin
neither sees nor lifts it."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.test import Client

from console.models import AuditAction, AuditEvent
from tests.security.conftest import PASSWORD
from tests.security.test_login_throttle import PER_ACCOUNT, PER_ADDRESS, assert_locked, fail

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_hashing")]

OFFICE = "203.0.113.7"


def _client(tenant, name: str, role: str) -> Client:
    from console.services import ensure_console_user

    user, _ = ensure_console_user(tenant, name, f"pw-{name}-123456", role)
    client = Client()
    client.force_login(user)
    return client


def _unlock(client, kind: str, address: str, username: str = ""):
    data = {"kind": kind, "address": address, "username": username}
    return client.post("/console/lockouts/unlock/", data)


def test_an_admin_sees_a_locked_account_and_unlocks_it(tenant, demo, attempt):
    admin = _client(tenant, "boss", "admin")
    assert "No account of yours is locked" in admin.get("/console/lockouts/").content.decode()
    fail(attempt, PER_ACCOUNT)
    page = admin.get("/console/lockouts/").content.decode()
    assert 'id="lockout-account-demo-127.0.0.1"' in page
    assert "15 minutes" in page and "127.0.0.1" in page

    response = _unlock(admin, "account", "127.0.0.1", "demo")
    assert response.status_code == 302 and response["Location"] == "/console/lockouts/"
    assert attempt("demo", PASSWORD).logged_in
    event = AuditEvent.objects.get(action=AuditAction.LOGIN_UNLOCKED)
    assert event.username == "boss" and event.tenant_id == tenant.pk
    assert event.details == {"kind": "account", "account": "demo", "address": "127.0.0.1"}
    assert "No account of yours is locked" in admin.get("/console/lockouts/").content.decode()


def test_only_admins_open_the_page(tenant, demo):
    for role in ("operator", "viewer"):
        client = _client(tenant, f"{role}1", role)
        assert client.get("/console/lockouts/").status_code == 403
        assert _unlock(client, "account", "127.0.0.1", "demo").status_code == 403


def test_another_tenants_admin_neither_sees_nor_lifts_the_lock(tenant, other_tenant, demo, attempt):
    fail(attempt, PER_ACCOUNT)
    stranger = _client(other_tenant, "theirboss", "admin")
    page = stranger.get("/console/lockouts/").content.decode()
    assert "demo" not in page and "127.0.0.1" not in page
    assert _unlock(stranger, "account", "127.0.0.1", "demo").status_code == 404
    assert_locked(attempt("demo", PASSWORD))
    assert not AuditEvent.objects.filter(action=AuditAction.LOGIN_UNLOCKED).exists()


def test_unlocking_a_shared_address_keeps_other_tenants_failures(
    tenant, other_tenant, demo, attempt
):
    from console.services import ensure_console_user

    ensure_console_user(other_tenant, "theirs", PASSWORD, "viewer")
    fail(attempt, 1, address=OFFICE)  # demo mistypes once
    fail(attempt, 4, username="theirs", address=OFFICE)
    for i in range(PER_ADDRESS // 2):  # then many mistyped names from the same office
        fail(attempt, 2, username=f"typo{i}", address=OFFICE)
    assert_locked(attempt("demo", PASSWORD, address=OFFICE))

    admin = _client(tenant, "boss", "admin")
    page = admin.get("/console/lockouts/").content.decode()
    assert f'id="lockout-address-{OFFICE}"' in page
    assert _unlock(admin, "address", OFFICE).status_code == 302
    assert attempt("demo", PASSWORD, address=OFFICE).logged_in
    # The failures at the other tenant's account are theirs to keep.
    assert AccessAttempt.objects.filter(username="theirs", ip_address=OFFICE).exists()
    assert not AccessAttempt.objects.filter(username__startswith="typo").exists()
    event = AuditEvent.objects.get(action=AuditAction.LOGIN_UNLOCKED)
    assert event.details == {"kind": "address", "address": OFFICE}


def test_an_unlock_of_nothing_locked_says_so(tenant, demo):
    admin = _client(tenant, "boss", "admin")
    response = _unlock(admin, "account", "127.0.0.1", "demo")
    assert response.status_code == 404
    assert _unlock(admin, "sideways", "127.0.0.1", "demo").status_code == 404
    assert _unlock(admin, "address", "not-an-address").status_code == 404
