"""Console login throttling: per account and address, per address, cool-off, audit trail."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.db.models import F
from django.test import RequestFactory

from console.clients import client_address
from console.models import AuditAction, AuditEvent
from tests.security.conftest import PASSWORD

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_hashing")]

PER_ACCOUNT = 5  # the shipped defaults (console/settings.py)
PER_ADDRESS = 50


def fail(attempt, times: int, username: str = "demo", address: str = "127.0.0.1", **headers):
    """``times`` wrong passwords; every one before the lock is the plain login form again."""
    return [attempt(username, f"wrong-{i}", address, **headers) for i in range(times)]


def assert_locked(response, minutes: int = 15):
    assert response.status_code == 429
    assert not response.logged_in
    page = response.content.decode()
    assert 'id="login-locked"' in page
    assert f"try again in {minutes} minutes" in page
    assert response["Retry-After"] == str(minutes * 60)
    assert PASSWORD not in page and "wrong-" not in page


def test_wrong_passwords_lock_the_account_and_the_right_one_is_refused(demo, attempt):
    before = fail(attempt, PER_ACCOUNT - 1)
    assert [r.status_code for r in before] == [200] * (PER_ACCOUNT - 1)
    assert all("Wrong username or password" in r.content.decode() for r in before)

    assert_locked(attempt("demo", "wrong-last"))
    # During the lock the right password is refused too, and does not log in.
    assert_locked(attempt("demo", PASSWORD))
    # The same account from another address is not locked (no lock-out of a victim by name).
    assert attempt("demo", PASSWORD, address="198.51.100.9").logged_in


def test_thirty_wrong_passwords_never_reach_the_form_again(demo, attempt):
    responses = fail(attempt, 30)
    assert [r.status_code for r in responses[PER_ACCOUNT - 1 :]] == [429] * (31 - PER_ACCOUNT)


def test_other_accounts_from_the_same_address_are_throttled_per_address(tenant, demo, attempt):
    from console.services import ensure_console_user

    ensure_console_user(tenant, "other", PASSWORD, "viewer")
    # Spray: many names, two wrong passwords each (below the per-account limit), from one
    # address; the address's fiftieth failure locks it.
    names = [f"sprayed{i}" for i in range(PER_ADDRESS // 2)]
    statuses = [r.status_code for name in names for r in fail(attempt, 2, username=name)]
    assert PER_ADDRESS == len(statuses)
    assert statuses == [200] * (PER_ADDRESS - 1) + [429]
    assert_locked(attempt("other", PASSWORD))
    assert_locked(attempt("demo", PASSWORD))
    # Other addresses are not affected.
    assert attempt("other", PASSWORD, address="198.51.100.9").logged_in


def test_forwarded_for_is_not_trusted_by_default(demo, attempt):
    """A client that sends a new X-Forwarded-For with each guess is still one address."""
    for i in range(PER_ACCOUNT - 1):
        assert attempt("demo", "nope", HTTP_X_FORWARDED_FOR=f"10.0.0.{i}").status_code == 200
    assert_locked(attempt("demo", "nope", HTTP_X_FORWARDED_FOR="10.0.0.99"))


def test_client_address_behind_trusted_proxies(settings):
    factory = RequestFactory()
    request = factory.get("/", REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.5")
    assert client_address(request) == "10.1.1.1"
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_address(request) == "203.0.113.5"  # what our proxy saw, not what was typed
    settings.TRUSTED_PROXY_COUNT = 2
    assert client_address(request) == "6.6.6.6"
    settings.TRUSTED_PROXY_COUNT = 3  # fewer hops than proxies: the request skipped one
    assert client_address(request) == "10.1.1.1"
    bad = factory.get("/", REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="not-an-ip")
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_address(bad) is None


def test_login_works_again_after_the_cool_off(demo, attempt):
    fail(attempt, PER_ACCOUNT)
    assert_locked(attempt("demo", PASSWORD))
    # The cool-off passes: move every counted failure back past the window.
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=15, seconds=1))
    assert attempt("demo", PASSWORD).logged_in


def test_an_admin_reset_unlocks_at_once(demo, attempt):
    from axes.utils import reset

    fail(attempt, PER_ACCOUNT)
    assert_locked(attempt("demo", PASSWORD))
    assert reset(username="demo") >= 1
    assert attempt("demo", PASSWORD).logged_in


def test_success_clears_the_accounts_failures_but_not_the_addresss(settings, demo, attempt):
    """Logging in to an account of one's own must not wipe the address's guesses at others
    (axes' default reset clears every attempt of the address)."""
    settings.LOGIN_FAILURE_LIMITS = {("username", "ip_address"): 5, ("ip_address",): 12}
    fail(attempt, 4, username="victim")
    fail(attempt, 4)
    assert attempt("demo", PASSWORD).logged_in
    # demo's count restarted: four more wrong passwords do not lock it.
    assert {r.status_code for r in fail(attempt, 4)} == {200}
    # The guesses at "victim" still count for the address: 4 + 4 + three more is 11, and
    # the twelfth failure locks the address.
    assert [attempt(f"n{i}", "guess").status_code for i in range(4)] == [200, 200, 200, 429]


def test_lockout_minutes_follow_the_setting(settings, demo, attempt):
    settings.AXES_COOLOFF_TIME = timedelta(minutes=40)
    fail(attempt, PER_ACCOUNT - 1)
    assert_locked(attempt("demo", "x"), minutes=40)


def test_an_oversized_name_is_a_form_error_not_a_crash(attempt):
    response = attempt("n" * 10_000, "whatever")
    assert response.status_code == 200 and not response.logged_in


def test_failures_and_lockouts_are_in_the_audit_log(tenant, demo, attempt):
    fail(attempt, PER_ACCOUNT)  # the fifth failure starts the lock
    attempt("demo", PASSWORD)  # refused: still a failure
    attempt("hunter2-typed-as-name", "x")  # no such account
    assert attempt("demo", PASSWORD, address="198.51.100.9").logged_in

    events = list(AuditEvent.objects.order_by("id"))
    failed = [e for e in events if e.action == AuditAction.LOGIN_FAILED and e.user_id]
    assert len(failed) == PER_ACCOUNT + 1
    assert all(e.tenant_id == tenant.pk and e.username == "demo" for e in failed)
    assert all(e.client_address == "127.0.0.1" for e in failed)
    assert all(e.user_agent == "pytest-attacker/1.0" for e in failed)
    assert [e.details["locked_out"] for e in failed] == [False] * (PER_ACCOUNT - 1) + [True, True]

    locks = [e for e in events if e.action == AuditAction.LOGIN_LOCKED_OUT]
    assert len(locks) == 1  # once, when the lock began; not for each refused attempt
    assert locks[0].username == "demo" and locks[0].tenant_id == tenant.pk

    unknown = [e for e in events if e.action == AuditAction.LOGIN_FAILED and not e.user_id]
    assert len(unknown) == 1
    assert unknown[0].username == "" and unknown[0].tenant_id is None
    assert unknown[0].details == {"locked_out": False, "unknown_account": True}

    ok = [e for e in events if e.action == AuditAction.LOGIN_SUCCEEDED]
    assert [(e.username, e.client_address) for e in ok] == [("demo", "198.51.100.9")]

    # Nothing typed as a password or an unknown name is stored anywhere in the log.
    stored = repr(list(AuditEvent.objects.values()))
    assert PASSWORD not in stored and "wrong-" not in stored and "hunter2" not in stored


def test_the_admin_site_login_is_throttled_too(demo):
    from django.test import Client

    client = Client()
    for i in range(PER_ACCOUNT - 1):
        response = client.post("/admin/login/", {"username": "demo", "password": f"w{i}"})
        assert response.status_code == 200
    assert client.post("/admin/login/", {"username": "demo", "password": "w"}).status_code == 429
    long_name = client.post("/admin/login/", {"username": "n" * 10_000, "password": "w"})
    assert long_name.status_code in (200, 429)


def _age(minutes: float, **lookup) -> None:
    """Move the counted failures (of ``lookup``'s rows) ``minutes`` into the past."""
    AccessAttempt.objects.filter(**lookup).update(
        attempt_time=F("attempt_time") - timedelta(minutes=minutes)
    )


def test_a_refused_attempt_during_a_lock_does_not_restart_the_wait(demo, attempt):
    """Knocking on a locked door (someone retrying, a colleague with the right password)
    must not keep it locked for ever: the lock ends 15 minutes after the failure that
    started it."""
    fail(attempt, PER_ACCOUNT)
    _age(10)
    assert_locked(attempt("demo", PASSWORD), minutes=5)
    assert_locked(attempt("demo", "still-wrong"), minutes=5)
    _age(5, username="demo")
    assert attempt("demo", PASSWORD).logged_in


def test_colleagues_behind_one_address_do_not_lock_each_other_out(tenant, demo, attempt):
    """An office behind one address: twenty-five people each mistype their password once
    (more than the old per-address limit of 20), and everyone can still log in."""
    statuses = [attempt(f"colleague{i}", "typo").status_code for i in range(25)]
    assert statuses == [200] * 25
    assert attempt("demo", PASSWORD).logged_in


def test_the_wait_shown_is_the_locked_accounts_own(tenant, demo, attempt):
    """Other people's later failures at the same address (below its own limit) do not
    lengthen the wait shown to a locked account."""
    fail(attempt, PER_ACCOUNT)
    _age(10)
    fail(attempt, 3, username="someone-else")
    assert_locked(attempt("demo", PASSWORD), minutes=5)


def test_the_lockout_page_says_which_lock(tenant, demo, attempt):
    fail(attempt, PER_ACCOUNT)
    page = attempt("demo", PASSWORD).content.decode()
    assert "for this account from your address" in page
    assert "other accounts can still log in from here" in page.lower()
    for i in range(PER_ADDRESS // 2):
        fail(attempt, 2, username=f"sprayed{i}", address="198.51.100.20")
    page = attempt("demo", PASSWORD, address="198.51.100.20").content.decode()
    assert "from your address" in page and "for this account" not in page
