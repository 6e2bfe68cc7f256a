"""Sign-on through an OpenID Connect provider (docs/players.md), against a real provider.

The provider (``tests.oidc_provider``) answers over HTTP on 127.0.0.1; the browser's part
(the redirect to its authorization page and back) is followed by hand, and allauth's own
calls (discovery, the token exchange, userinfo) go to it for real.
"""

from __future__ import annotations

import logging
from urllib.parse import urlparse

import pytest
import requests
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount, SocialApp, SocialToken
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from console.models import AuditAction, AuditEvent, Membership, Role
from roleplay.accounts import services
from roleplay.accounts.models import DeviceSession, PlayerAccount
from roleplay.moderation.services import sanction
from tests.oidc_provider import CLIENT_ID, CLIENT_SECRET, Provider

pytestmark = pytest.mark.django_db(transaction=False)

LOGIN = "/app/oidc/sso/login/"
CALLBACK = "/app/oidc/sso/login/callback/"


@pytest.fixture(scope="module")
def provider():
    running = Provider().start()
    yield running
    running.stop()


def _providers(server_url: str, name: str = "Example ID") -> dict:
    """``SOCIALACCOUNT_PROVIDERS`` as console.settings builds it from ``OIDC_*``."""
    app = {
        "provider_id": "sso",
        "name": name,
        "client_id": CLIENT_ID,
        "secret": CLIENT_SECRET,
        "settings": {"server_url": server_url, "oauth_pkce_enabled": True},
    }
    return {"openid_connect": {"APPS": [app]}}


@pytest.fixture
def sign_on(provider, app_tenant, settings):
    """Sign-on turned on; ``sign_on(claims, client=None, next="")`` runs the whole flow and
    returns (client, the callback's response)."""
    settings.SOCIALACCOUNT_PROVIDERS = _providers(provider.issuer)

    def flow(claims: dict, client: Client | None = None, next: str = ""):
        client = client or Client(REMOTE_ADDR="198.51.100.4", HTTP_USER_AGENT="sso-phone/2.0")
        person = {"sub": f"sub-{claims.get('email')}"[:100], **claims}
        provider.person = {k: v for k, v in person.items() if v is not None}  # None: left out
        start = client.post(LOGIN, {"next": next} if next else {})
        assert start.status_code == 302, start.content[:500]
        assert start["Location"].startswith(f"{provider.issuer}/authorize?")
        agreed = requests.get(start["Location"], allow_redirects=False, timeout=10)
        assert agreed.status_code == 302, agreed.text
        back = urlparse(agreed.headers["Location"])
        assert (back.netloc, back.path) == ("testserver", CALLBACK)
        return client, client.get(f"{back.path}?{back.query}")

    return flow


def _open(tenant, policy: str = "open") -> None:
    services.set_app_settings(tenant, signup_policy=policy)


def _signed_in_as(client) -> int | None:
    value = client.session.get("_auth_user_id")
    return int(value) if value is not None else None


def test_open_policy_creates_the_account_and_signs_in(sign_on, app_tenant, provider):
    _open(app_tenant)
    claims = {"email": "New.Person@Example.com", "email_verified": True, "name": "Nova"}
    client, response = sign_on(claims, next="/app/chats/")
    assert response.status_code == 302 and response["Location"] == "/app/chats/"
    account = PlayerAccount.objects.get(tenant=app_tenant, email="new.person@example.com")
    assert account.route == "oidc" and account.email_verified_at is not None
    assert account.player.display_name == "Nova"
    assert not account.user.has_usable_password()
    assert _signed_in_as(client) == account.user_id
    assert client.get("/app/").status_code == 200
    device = DeviceSession.objects.get(account=account)
    assert device.user_agent == "sso-phone/2.0" and device.client_address == "198.51.100.4"
    signed_up = AuditEvent.objects.get(action=AuditAction.PLAYER_SIGNED_UP)
    assert signed_up.details == {"account": str(account.id), "route": "oidc"}
    # The code went through the token endpoint with the secret and the PKCE verifier.
    assert provider.token_requests[-1]["code_verifier"]


def test_a_second_sign_on_is_the_same_account(sign_on, app_tenant):
    _open(app_tenant)
    claims = {"email": "again@example.com", "email_verified": True}
    first, _ = sign_on(claims)
    second, response = sign_on(claims)
    assert response.status_code == 302 and response["Location"] == "/app/"
    assert PlayerAccount.objects.filter(tenant=app_tenant).count() == 1
    assert _signed_in_as(first) == _signed_in_as(second)
    assert DeviceSession.objects.count() == 2


def test_an_existing_account_signs_in_by_its_verified_email(sign_on, make_account, sign_in):
    account = make_account("ann@example.com")  # sign-up is closed: only existing accounts
    client, response = sign_on({"email": "ANN@example.com", "email_verified": True})
    assert response.status_code == 302
    assert _signed_in_as(client) == account.user_id
    assert PlayerAccount.objects.count() == 1
    event = AuditEvent.objects.get(action=AuditAction.PLAYER_PROVIDER)
    assert event.details == {"account": str(account.id), "verified_now": False}
    _, by_password = sign_in("ann@example.com")  # the password still works
    assert by_password.status_code == 302


def test_an_unverified_provider_email_never_takes_an_existing_account(sign_on, make_account):
    account = make_account("ann@example.com")
    client, response = sign_on({"email": "ann@example.com", "email_verified": False})
    assert response.status_code == 403
    assert "has not verified this e-mail" in response.content.decode()
    assert _signed_in_as(client) is None
    assert client.get("/app/").status_code == 302
    assert not DeviceSession.objects.filter(account=account).exists()
    assert not AuditEvent.objects.filter(action=AuditAction.PLAYER_PROVIDER).exists()


def test_an_account_whose_email_was_never_verified_loses_its_password(
    sign_on, make_account, sign_in
):
    """Whoever typed the e-mail at sign-up never proved it; the provider's person did."""
    account = make_account("eve@example.com", verified=False, route="open")
    other, _ = sign_in("eve@example.com")
    client, response = sign_on({"email": "eve@example.com", "email_verified": True})
    assert response.status_code == 302 and _signed_in_as(client) == account.user_id
    account.refresh_from_db()
    assert account.email_verified_at is not None
    assert not account.user.has_usable_password()
    assert _signed_in_as(other) is None  # the password's session ended
    event = AuditEvent.objects.get(action=AuditAction.PLAYER_PROVIDER)
    assert event.details["verified_now"] is True


def test_a_closed_community_refuses_a_new_person(sign_on, app_tenant):
    users = get_user_model().objects.count()
    client, response = sign_on({"email": "stranger@example.com", "email_verified": True})
    assert response.status_code == 403
    assert "ask the operator" in response.content.decode()
    assert 'id="sign-on-refused"' in response.content.decode()
    assert _signed_in_as(client) is None
    assert not PlayerAccount.objects.exists()
    assert get_user_model().objects.count() == users


@pytest.mark.parametrize("email", ["", "not-an-address", "x" * 250 + "@example.com"])
def test_a_person_without_a_usable_email_is_refused(sign_on, app_tenant, email):
    _open(app_tenant)
    client, response = sign_on({"email": email, "email_verified": True})
    assert response.status_code == 403 and _signed_in_as(client) is None
    assert "no usable e-mail" in response.content.decode()
    assert not PlayerAccount.objects.exists()


@pytest.mark.parametrize("sub", [None, "s" * 300])
def test_a_provider_answer_without_a_usable_subject_is_our_page(sign_on, app_tenant, sub):
    _open(app_tenant)
    claims = {"email": "new@example.com", "email_verified": True, "sub": sub}
    client, response = sign_on(claims)
    assert response.status_code == 502 and _signed_in_as(client) is None
    assert "could not be used" in response.content.decode()


def test_an_invite_only_community_refuses_a_new_person(sign_on, app_tenant):
    _open(app_tenant, "invite")
    _, response = sign_on({"email": "stranger@example.com", "email_verified": True})
    assert response.status_code == 403
    assert "by invite" in response.content.decode()
    assert not PlayerAccount.objects.exists()


def test_an_unverified_new_person_waits_for_our_mail(
    sign_on, app_tenant, mailoutbox, django_capture_on_commit_callbacks
):
    _open(app_tenant)
    with django_capture_on_commit_callbacks(execute=True):
        client, response = sign_on({"email": "maybe@example.com", "email_verified": False})
    assert response.status_code == 302 and response["Location"] == "/app/verify/"
    account = PlayerAccount.objects.get(email="maybe@example.com")
    assert account.email_verified_at is None and _signed_in_as(client) is None
    assert [m.to for m in mailoutbox] == [["maybe@example.com"]]


def test_a_banned_player_is_refused(sign_on, make_account):
    account = make_account("ann@example.com")
    sanction(account.player, "ban", reason="spam")
    client, response = sign_on({"email": "ann@example.com", "email_verified": True})
    assert response.status_code == 403
    assert "banned: spam" in response.content.decode()
    assert _signed_in_as(client) is None
    assert not DeviceSession.objects.exists()


def test_a_console_user_is_never_signed_in(sign_on, make_account, app_tenant):
    account = make_account("op@example.com")
    Membership.objects.create(user=account.user, tenant=app_tenant, role=Role.OPERATOR)
    client, response = sign_on({"email": "op@example.com", "email_verified": True})
    assert response.status_code == 403 and _signed_in_as(client) is None


def test_sign_on_off_shows_no_button_and_no_door(app_tenant, settings):
    settings.SOCIALACCOUNT_PROVIDERS = {"openid_connect": {"APPS": []}}
    _open(app_tenant)
    client = Client()
    for page in ("/app/login/", "/app/signup/"):
        body = client.get(page).content.decode()
        assert 'id="sign-on' not in body and "Sign in with" not in body
    for path in (LOGIN, CALLBACK, "/app/oidc/other/login/"):
        assert client.get(path).status_code == 404
        assert client.post(path).status_code == 404


def test_sign_on_on_shows_the_button_and_only_posts_out(sign_on, app_tenant):
    _open(app_tenant)
    client = Client()
    for page in ("/app/login/", "/app/signup/"):
        body = client.get(page).content.decode()
        assert 'id="sign-on-button"' in body and "Sign in with Example ID" in body
    assert client.get(LOGIN).status_code == 405
    assert client.post("/app/oidc/other/login/").status_code == 404
    assert Client(enforce_csrf_checks=True).post(LOGIN).status_code == 403  # the form's token


def test_a_failed_or_forged_return_is_our_page(sign_on, app_tenant):
    client = Client()
    cancelled = client.get(CALLBACK, {"error": "access_denied", "state": "nope"})
    forged = client.get(CALLBACK, {"code": "stolen", "state": "nope"})
    for response in (cancelled, forged):
        assert response.status_code == 400
        assert 'id="sign-on-refused"' in response.content.decode()
    assert _signed_in_as(client) is None


def test_a_provider_that_cannot_be_reached_is_our_page(app_tenant, settings):
    settings.SOCIALACCOUNT_PROVIDERS = _providers("http://127.0.0.1:9")  # discard: refused
    response = Client().post(LOGIN)
    assert response.status_code == 502
    assert 'id="sign-on-refused"' in response.content.decode()


def test_the_client_secret_is_never_stored_nor_logged(sign_on, app_tenant, caplog):
    _open(app_tenant)
    with caplog.at_level(logging.DEBUG):
        sign_on({"email": "new@example.com", "email_verified": True})
    assert CLIENT_SECRET not in caplog.text
    assert all(CLIENT_SECRET not in str(r.args) for r in caplog.records)
    for model in (SocialApp, SocialAccount, SocialToken, EmailAddress):
        assert not model.objects.exists()  # allauth's tables are never written
        assert not admin.site.is_registered(model)  # nor offered to type a secret into
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            quoted = connection.ops.quote_name(table)
            cursor.execute(f"SELECT count(*) FROM {quoted} t WHERE t::text LIKE %s", [
                f"%{CLIENT_SECRET}%"
            ])  # fmt: skip
            assert cursor.fetchone()[0] == 0, table
