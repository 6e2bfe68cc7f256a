"""The player app's account pages: sign-in, sign-up, verification, resets, devices."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import authenticate, login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.models import AnonymousUser
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from console.failures import DomainError, FieldErrors
from roleplay.accounts import oidc, selectors, services
from roleplay.accounts.access import player_view
from roleplay.accounts.forms import LoginForm, PlayerPasswordResetForm, SignupForm
from roleplay.accounts.models import SignupPolicy

BACKEND = "roleplay.accounts.backend.PlayerEmailBackend"


def _next(request) -> str:
    return safe_next(request, request.POST.get("next") or request.GET.get("next") or "")


def safe_next(request, target: str) -> str:
    """Where to go after signing in: ``target`` when it is a page of the app, else home."""
    ok = url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure())
    return target if ok and target.startswith("/app/") else reverse_lazy("app_home")


@require_http_methods(["GET", "POST"])
def sign_in(request, *, locked_out: bool = False, wait_minutes: int = 0):
    tenant = selectors.app_tenant()
    form = LoginForm(request.POST if request.method == "POST" and not locked_out else None)
    failed = False
    if form.is_bound and form.is_valid() and tenant is not None:
        user = authenticate(
            request,
            username=selectors.normalize_email(form.cleaned_data["email"]),
            password=form.cleaned_data["password"],
            app_tenant=tenant,
        )
        if user is not None:
            login(request, user, backend=BACKEND)
            services.record_device(user.player_account, request)
            return redirect(_next(request))
        failed = True  # (a locked-out attempt's page is replaced by django-axes' middleware)
    policy = selectors.app_settings(tenant).signup_policy if tenant else SignupPolicy.CLOSED
    context = {
        "form": form,
        "failed": failed or (form.is_bound and not form.is_valid()),
        "next": _next(request),
        "can_sign_up": policy == SignupPolicy.OPEN,
        "locked_out": locked_out,
        "wait_minutes": wait_minutes,
        "sign_on": oidc.button(),
    }
    return render(request, "app/login.html", context, status=429 if locked_out else 200)


@require_POST
def sign_out(request):
    logout(request)
    return redirect("app_login")


def _sign_up(request, *, invite: str = ""):
    tenant = selectors.app_tenant()
    policy = selectors.app_settings(tenant).signup_policy if tenant else SignupPolicy.CLOSED
    if policy == SignupPolicy.CLOSED or (policy == SignupPolicy.INVITE and not invite):
        return render(request, "app/signup_closed.html", status=403)
    form = SignupForm(request.POST if request.method == "POST" else None)
    error = ""
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        try:
            account = services.sign_up(
                tenant,
                email=data["email"],
                password=data["password"],
                display_name=data.get("display_name") or "",
                invite=invite,
                request=request,
            )
        except FieldErrors as exc:
            for field, errors in exc.by_field.items():
                form.add_error(field if field in form.fields else None, errors)
        except DomainError as exc:
            error = exc.message
        else:
            request.session["pending_account"] = str(account.id)
            return redirect("app_verify_pending")
    status = 422 if error else 400 if form.errors else 200
    context = {"form": form, "error": error, "invite": invite, "next": reverse_lazy("app_home")}
    context["sign_on"] = None if invite else oidc.button()
    return render(request, "app/signup.html", context, status=status)


@require_http_methods(["GET", "POST"])
def sign_up(request):
    return _sign_up(request)


@require_http_methods(["GET", "POST"])
def sign_up_invited(request, token: str):
    return _sign_up(request, invite=token[:200])


@require_http_methods(["GET", "POST"])
def verify_pending(request):
    """ "Check your mail", with a button that sends the link again."""
    account = selectors.account_of(request.user)
    if account is None:
        pending = request.session.get("pending_account")
        account = selectors.PlayerAccount.objects.filter(pk=pending).first() if pending else None
    if account is not None and account.email_verified_at is not None:
        return redirect("app_home")
    if request.method == "POST" and account is not None:
        services.send_verification(account, request=request)
        messages.success(request, "We sent the link again.")
        return redirect("app_verify_pending")
    return render(request, "app/verify_pending.html", {"account": account})


def verify(request, token: str):
    try:
        services.verify_email(token[:1000])
    except DomainError as exc:
        return render(request, "app/verified.html", {"error": exc.message}, status=400)
    return render(request, "app/verified.html", {})


@player_view
def account(request):
    devices = list(selectors.devices(request.account))
    current = request.session.session_key
    return render(
        request,
        "app/account.html",
        {"account": request.account, "devices": devices, "current_key": current},
    )


@player_view
@require_POST
def device_revoke(request, device_id):
    device = get_object_or_404(selectors.devices(request.account), pk=device_id)
    services.revoke_device(request.account, device.pk, request=request)
    messages.success(request, "That device is signed out.")
    return redirect("app_account")


@player_view
@require_POST
def confirm_age(request):
    services.confirm_age(request.account, request=request)
    messages.success(request, "Thank you: your age is confirmed.")
    back = request.POST.get("back", "")
    return redirect(back if back.startswith("/app/") and "//" not in back else "app_account")


class ResetView(auth_views.PasswordResetView):
    form_class = PlayerPasswordResetForm
    template_name = "app/reset.html"
    email_template_name = "app/reset_email.txt"
    subject_template_name = "app/reset_subject.txt"
    success_url = reverse_lazy("app_reset_sent")


class ResetSentView(auth_views.PasswordResetDoneView):
    template_name = "app/reset_sent.html"


class ResetConfirmView(auth_views.PasswordResetConfirmView):
    template_name = "app/reset_confirm.html"
    success_url = reverse_lazy("app_reset_complete")

    def form_valid(self, form):
        response = super().form_valid(form)
        account = getattr(form.user, "player_account", None)
        if account is not None:
            services.end_all_sessions(account)  # a new password signs every device out
        return response


class ResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "app/reset_complete.html"


def login_locked_out(request, *args, **kwargs):
    """django-axes' lockout answer (``AXES_LOCKOUT_CALLABLE``) for both sign-in pages: the
    app's page for ``/app/``, the console's otherwise; a 429 with ``Retry-After``."""
    from axes.handlers.proxy import AxesProxyHandler

    from console import views as console_views
    from console.throttle import minutes_to_wait

    if not request.path.startswith("/app/"):
        return console_views.login_locked_out(request, *args, **kwargs)
    handler = AxesProxyHandler.get_implementation()
    credentials = getattr(request, "axes_credentials", None)
    minutes = minutes_to_wait(handler.retry_after(request, credentials))
    request.method = "GET"  # the page again, not another attempt
    response = sign_in(request, locked_out=True, wait_minutes=minutes)
    response["Retry-After"] = str(minutes * 60)
    return response


@player_view
def export(request):
    """ "Download my data": one zip of everything that is the player's."""
    from django.http import HttpResponse

    from roleplay.accounts.export import export_account

    data = export_account(request.account, request=request)
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="my-data.zip"'
    response["Cache-Control"] = "no-store"
    return response


@player_view
@require_POST
def delete(request):
    """Delete the account and everything of the player's, after the password again."""
    from roleplay.accounts.deletion import delete_account

    if not request.user.check_password(request.POST.get("password", "")[:4096]):
        messages.error(request, "Wrong password: nothing was deleted.")
        return redirect("app_account")
    try:
        delete_account(request.account, request=request)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("app_account")
    request.session.flush()  # no logout(): its audit would name the user just deleted
    request.user = AnonymousUser()
    return render(request, "app/deleted.html")
