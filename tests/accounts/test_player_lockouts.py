"""Players' sign-in lockouts on the console's Lockouts page: a player locked out of ``/app/``
is listed by their e-mail (never the opaque ``player-<hex>`` user name), an admin unlocks
them the way they unlock an operator, audited, and another tenant's admin sees nothing."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.test import Client

from console.models import AuditAction, AuditEvent

pytestmark = pytest.mark.django_db

PER_ACCOUNT = 5  # the shipped default (console/settings.py)


def _admin(tenant, name: str = "boss") -> Client:
    from console.services import ensure_console_user

    user, _ = ensure_console_user(tenant, name, f"pw-{name}-123456", "admin")
    client = Client()
    client.force_login(user)
    return client


def _lock_out(sign_in, email: str, address: str = "127.0.0.1"):
    for i in range(PER_ACCOUNT):
        _, response = sign_in(email, f"wrong-{i}", address=address)
    assert response.status_code == 429


def test_a_locked_out_player_is_listed_by_e_mail_and_unlocked(app_tenant, make_account, sign_in):
    account = make_account("ann@example.com")
    _lock_out(sign_in, "Ann@Example.com ")
    admin = _admin(app_tenant)
    page = admin.get("/console/lockouts/").content.decode()
    assert 'id="lockout-account-ann@example.com-127.0.0.1"' in page
    assert "Player <strong>ann@example.com</strong>" in page
    assert account.user.username not in page

    data = {"kind": "account", "address": "127.0.0.1", "username": "ann@example.com"}
    response = admin.post("/console/lockouts/unlock/", data)
    assert response.status_code == 302
    assert not AccessAttempt.objects.filter(username="ann@example.com").exists()
    _, signed_in = sign_in("ann@example.com")
    assert signed_in.status_code == 302
    event = AuditEvent.objects.get(action=AuditAction.LOGIN_UNLOCKED)
    assert event.username == "boss" and event.tenant_id == app_tenant.pk
    expected = {"kind": "account", "account": "ann@example.com", "address": "127.0.0.1"}
    assert event.details == expected


def test_another_tenants_admin_neither_sees_nor_lifts_a_players_lock(
    app_tenant, other_tenant, make_account, sign_in
):
    make_account("ann@example.com")
    _lock_out(sign_in, "ann@example.com")
    stranger = _admin(other_tenant, "theirboss")
    page = stranger.get("/console/lockouts/").content.decode()
    assert "ann@example.com" not in page and "127.0.0.1" not in page
    data = {"kind": "account", "address": "127.0.0.1", "username": "ann@example.com"}
    assert stranger.post("/console/lockouts/unlock/", data).status_code == 404
    assert AccessAttempt.objects.filter(username="ann@example.com").exists()
    assert not AuditEvent.objects.filter(action=AuditAction.LOGIN_UNLOCKED).exists()


def test_an_address_unlock_clears_the_tenants_players_and_keeps_other_tenants(
    app_tenant, other_tenant, make_account, sign_in, settings
):
    from roleplay.accounts import services

    settings.LOGIN_FAILURE_LIMITS = {**settings.LOGIN_FAILURE_LIMITS, ("ip_address",): 6}
    services.create_account(other_tenant, email="zed@example.com", password="pw-zed-123456")
    make_account("ann@example.com")
    office = "203.0.113.7"
    for i in range(3):
        sign_in("ann@example.com", f"wrong-{i}", address=office)
    # zed is the other tenant's player: the app does not serve them, yet the attempt counts.
    for i in range(3):
        sign_in("zed@example.com", f"wrong-{i}", address=office)
    admin = _admin(app_tenant)
    assert f'id="lockout-address-{office}"' in admin.get("/console/lockouts/").content.decode()
    data = {"kind": "address", "address": office, "username": ""}
    assert admin.post("/console/lockouts/unlock/", data).status_code == 302
    assert not AccessAttempt.objects.filter(username="ann@example.com").exists()
    assert AccessAttempt.objects.filter(username="zed@example.com").exists()
