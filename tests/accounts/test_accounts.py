"""Player accounts on /app/: policies, invites, verification, sign-in, devices, resets."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from console.models import AuditAction, AuditEvent, Player
from roleplay.accounts import services
from roleplay.accounts.errors import EmailTaken, InviteInvalid, SignupClosed
from roleplay.accounts.models import DeviceSession, Invite, PlayerAccount
from roleplay.accounts.selectors import app_settings
from tests.accounts.conftest import PASSWORD

pytestmark = pytest.mark.django_db(transaction=False)


def _link(body: str) -> str:
    return re.search(r"http://testserver(/app/\S+)", body).group(1)


def test_an_operator_account_signs_in_and_sees_home(player_client):
    page = player_client.get("/app/")
    assert page.status_code == 200
    assert 'id="my-chats"' in page.content.decode()
    assert DeviceSession.objects.filter(account=player_client.account).count() == 1


def test_wrong_password_and_unknown_email_read_alike(make_account, sign_in):
    make_account()
    _, wrong = sign_in("ann@example.com", "nope-nope-nope")
    _, unknown = sign_in("nobody@example.com", "nope-nope-nope")
    for response in (wrong, unknown):
        assert response.status_code == 200
        assert 'id="login-failed"' in response.content.decode()
    assert AuditEvent.objects.filter(action=AuditAction.LOGIN_FAILED).count() == 2


def test_a_player_has_no_console_and_a_console_user_no_app(player_client, operator_user):
    assert player_client.get("/console/").status_code == 403
    console = Client()
    console.force_login(operator_user)
    page = console.get("/app/")
    assert page.status_code == 403
    assert 'id="not-player"' in page.content.decode()


def test_anonymous_is_sent_to_sign_in():
    response = Client().get("/app/account/")
    assert response.status_code == 302
    assert response["Location"].startswith("/app/login/?next=")


def test_open_sign_up_verifies_the_email_before_play(
    app_tenant, sign_in, django_capture_on_commit_callbacks
):
    services.set_app_settings(app_tenant, signup_policy="open")
    client = Client()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/app/signup/",
            {
                "email": "New@Example.com",
                "display_name": "Newt",
                "password": PASSWORD,
                "password_again": PASSWORD,
            },
        )
    assert response.status_code == 302
    account = PlayerAccount.objects.get(email="new@example.com")
    assert account.route == "open" and account.email_verified_at is None
    assert account.player.display_name == "Newt"
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["new@example.com"]
    signed, _ = sign_in("new@example.com")
    assert signed.get("/app/")["Location"] == "/app/verify/"
    assert client.get(_link(mail.outbox[0].body)).status_code == 200
    assert signed.get("/app/").status_code == 200


def test_a_forged_verification_link_is_refused(app_tenant):
    response = Client().get("/app/verify/not-a-token/")
    assert response.status_code == 400
    assert "does not work" in response.content.decode()


def test_closed_policy_refuses_sign_up(app_tenant):
    response = Client().post(
        "/app/signup/",
        {"email": "x@example.com", "password": PASSWORD, "password_again": PASSWORD},
    )
    assert response.status_code == 403
    assert not PlayerAccount.objects.exists()
    with pytest.raises(SignupClosed):
        services.sign_up(app_tenant, email="x@example.com", password=PASSWORD)


def test_invites_are_counted_and_expire(app_tenant):
    services.set_app_settings(app_tenant, signup_policy="invite")
    invite, raw = services.create_invite(app_tenant, max_uses=2, hours=1)
    assert Client().get("/app/signup/").status_code == 403  # invite policy: a link is needed
    for n in (1, 2):
        services.sign_up(app_tenant, email=f"p{n}@example.com", password=PASSWORD, invite=raw)
    invite.refresh_from_db()
    assert invite.uses == 2
    with pytest.raises(InviteInvalid):
        services.sign_up(app_tenant, email="p3@example.com", password=PASSWORD, invite=raw)
    other, other_raw = services.create_invite(app_tenant)
    Invite.objects.filter(pk=other.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(InviteInvalid):
        services.sign_up(app_tenant, email="p4@example.com", password=PASSWORD, invite=other_raw)
    assert PlayerAccount.objects.filter(route="invite").count() == 2


def test_an_invite_page_signs_up(app_tenant):
    services.set_app_settings(app_tenant, signup_policy="invite")
    _, raw = services.create_invite(app_tenant)
    body = {"email": "inv@example.com", "password": PASSWORD, "password_again": PASSWORD}
    assert Client().post(f"/app/invite/{raw}/", body).status_code == 302
    again = Client().post(f"/app/invite/{raw}/", {**body, "email": "inv2@example.com"})
    assert again.status_code == 422
    assert PlayerAccount.objects.filter(route="invite").count() == 1


def test_a_bad_password_spends_no_invite_use(app_tenant):
    services.set_app_settings(app_tenant, signup_policy="invite")
    invite, raw = services.create_invite(app_tenant)
    response = Client().post(
        f"/app/invite/{raw}/", {"email": "a@example.com", "password": "x", "password_again": "x"}
    )
    assert response.status_code == 400
    invite.refresh_from_db()
    assert invite.uses == 0


def test_an_email_is_one_account_per_tenant(make_account, other_tenant):
    make_account()
    with pytest.raises(EmailTaken):
        make_account("ANN@example.com")
    services.create_account(other_tenant, email="ann@example.com", password=PASSWORD)


def test_an_integrator_player_keeps_their_chats_when_given_an_account(app_tenant, player):
    account = services.create_account(
        app_tenant, email="p1@example.com", password=PASSWORD, player=player
    )
    assert account.player == player
    with pytest.raises(EmailTaken):  # a player row links to at most one account
        services.create_account(
            app_tenant, email="p2@example.com", password=PASSWORD, player=player
        )
    assert Player.objects.filter(tenant=app_tenant).count() == 1


def test_devices_are_listed_and_revocable(make_account, sign_in):
    account = make_account()
    phone, _ = sign_in(account.email, address="198.51.100.1")
    laptop, _ = sign_in(account.email, address="198.51.100.2")
    page = laptop.get("/app/account/").content.decode()
    assert "this device" in page and "198.51.100.1" in page
    phone_device = DeviceSession.objects.get(client_address="198.51.100.1")
    assert laptop.post(f"/app/account/devices/{phone_device.id}/revoke/").status_code == 302
    assert phone.get("/app/")["Location"].startswith("/app/login/")
    assert laptop.get("/app/").status_code == 200


def test_password_reset_signs_every_device_out(make_account, sign_in):
    account = make_account()
    device, _ = sign_in(account.email)
    Client().post("/app/reset/", {"email": "ann@example.com"})
    assert len(mail.outbox) == 1
    link = _link(mail.outbox[0].body)
    client = Client()
    form = client.get(link, follow=True)
    assert form.status_code == 200
    new = "another-pw-98765"
    done = client.post(form.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert done.status_code == 302
    assert device.get("/app/")["Location"].startswith("/app/login/")
    _, response = sign_in(account.email, new)
    assert response.status_code == 302


def test_reset_of_a_console_user_sends_nothing(app_tenant, operator_user):
    operator_user.email = "op@example.com"
    operator_user.save()
    Client().post("/app/reset/", {"email": "op@example.com"})
    assert mail.outbox == []


def test_sign_in_is_throttled_like_the_console(make_account, sign_in):
    make_account()
    for _ in range(4):
        _, response = sign_in("ann@example.com", "wrong-password")
        assert response.status_code == 200
    _, locked = sign_in("ann@example.com", "wrong-password")
    assert locked.status_code == 429
    assert 'id="login-locked"' in locked.content.decode()
    assert int(locked["Retry-After"]) > 0
    _, right = sign_in("ann@example.com")
    assert right.status_code == 429


def test_the_console_page_creates_invites_and_accounts(app_tenant, fast_hashing):
    from console.services import ensure_console_user

    admin, _ = ensure_console_user(app_tenant, "boss", "pw-boss-123456", "admin")
    client = Client()
    client.force_login(admin)
    assert client.get("/console/player-app/").status_code == 200
    page = client.post("/console/player-app/invites/", {"max_uses": 3, "hours": 24, "note": "x"})
    assert 'id="new-invite-link"' in page.content.decode()
    made = client.post(
        "/console/player-app/accounts/",
        {"email": "c@example.com", "display_name": "C", "password": PASSWORD},
    )
    assert made.status_code == 302
    assert PlayerAccount.objects.get(email="c@example.com").email_verified_at is not None
    client.post("/console/player-app/settings/", {"signup_policy": "open"})
    assert app_settings(app_tenant).signup_policy == "open"
    bad = client.post("/console/player-app/settings/", {"signup_policy": "everyone"})
    assert bad.status_code == 200 and app_settings(app_tenant).signup_policy == "open"


def test_an_operator_cannot_open_the_player_app_page(app_tenant, operator_user):
    client = Client()
    client.force_login(operator_user)
    assert client.get("/console/player-app/").status_code == 403
