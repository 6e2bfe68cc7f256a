"""The console's player-app page (admins): sign-up policy, invites, accounts, and the
outgoing mail of a machine without a mail server."""

from __future__ import annotations

from email import message_from_bytes
from email.policy import default as default_policy
from pathlib import Path

from django.conf import settings
from django.contrib import messages as flash
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from console.access import console_view, posted
from console.failures import DomainError, FieldErrors
from console.models import Role
from console.scoping import get_scoped_or_404
from roleplay.accounts import selectors, services
from roleplay.accounts.forms import AccountForm, AppSettingsForm, InviteForm
from roleplay.accounts.models import Invite

MAIL_SHOWN = 50


def _page(request, **extra):
    tenant = request.tenant
    row = selectors.app_settings(tenant)
    context = {
        "settings_form": AppSettingsForm(
            initial={"signup_policy": row.signup_policy, "player_characters": row.player_characters}
        ),
        "invite_form": InviteForm(),
        "account_form": AccountForm(),
        "invites": list(selectors.invites(tenant)[:100]),
        "accounts": list(selectors.accounts(tenant)[:500]),
        "serves_app": (selectors.app_tenant() or tenant).pk == tenant.pk,
        "app_url": request.build_absolute_uri("/app/"),
        **extra,
    }
    return render(request, "roleplay/accounts/player_app.html", context)


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def player_app(request):
    return _page(request)


@console_view(read=Role.ADMIN, write=Role.ADMIN)
@require_POST
def player_app_settings(request):
    form = AppSettingsForm(posted(request))
    if form.is_valid():
        services.set_app_settings(
            request.tenant, by=request.user, request=request, **form.cleaned_data
        )
        flash.success(request, "Saved.")
        return redirect("player_app")
    return _page(request, settings_form=form)


@never_cache
@console_view(read=Role.ADMIN, write=Role.ADMIN)
@require_POST
def invite_create(request):
    """The link is shown once, in this response (only its hash is kept)."""
    form = InviteForm(posted(request))
    if not form.is_valid():
        return _page(request, invite_form=form)
    invite, raw = services.create_invite(
        request.tenant, by=request.user, request=request, **form.cleaned_data
    )
    link = request.build_absolute_uri(reverse("app_signup_invited", args=[raw]))
    return _page(request, new_invite=invite, new_invite_link=link)


@console_view(read=Role.ADMIN, write=Role.ADMIN)
@require_POST
def invite_revoke(request, pk):
    invite = get_scoped_or_404(Invite, request.tenant, pk=pk)
    services.revoke_invite(invite, by=request.user, request=request)
    flash.success(request, "Invite revoked.")
    return redirect("player_app")


@console_view(read=Role.ADMIN, write=Role.ADMIN)
@require_POST
def account_create(request):
    form = AccountForm(posted(request))
    if form.is_valid():
        try:
            services.create_account(
                request.tenant, by=request.user, request=request, **form.cleaned_data
            )
        except FieldErrors as exc:
            for field, errors in exc.by_field.items():
                form.add_error(field if field in form.fields else None, errors)
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            flash.success(request, f"Account {form.cleaned_data['email']} created.")
            return redirect("player_app")
    return _page(request, account_form=form)


def _mails() -> list[dict]:
    folder = Path(settings.EMAIL_FILE_PATH)
    if not folder.is_dir():
        return []
    files = sorted(folder.glob("*.log"), key=lambda p: p.stat().st_mtime, reverse=True)
    mails: list[dict] = []
    for path in files[:MAIL_SHOWN]:
        for chunk in path.read_bytes().split(b"-" * 79):
            if not chunk.strip():
                continue
            msg = message_from_bytes(chunk.strip(), policy=default_policy)
            body = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
            mails.append(
                {
                    "to": msg.get("To", ""),
                    "subject": msg.get("Subject", ""),
                    "date": msg.get("Date", ""),
                    "body": body.get_content() if body is not None else "",
                }
            )
    return mails[:MAIL_SHOWN]


@never_cache
@console_view(read=Role.ADMIN, write=Role.ADMIN)
def outgoing_mail(request):
    """The mails this machine wrote to files (no SMTP server configured), newest first: a
    development machine's verification and reset links. Empty when SMTP is configured."""
    file_backend = settings.EMAIL_BACKEND.endswith("filebased.EmailBackend")
    mails = _mails() if file_backend else []
    return render(
        request, "roleplay/accounts/mail.html", {"mails": mails, "file_backend": file_backend}
    )
