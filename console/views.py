"""Console shell pages: dashboard, API tokens, audit log, login lockout and lockouts.

Every console page goes through ``console.access.console_view`` (login, membership, role by
HTTP method).
"""

from __future__ import annotations

from axes.handlers.proxy import AxesProxyHandler
from django.contrib import messages as flash
from django.contrib.auth.forms import AuthenticationForm
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from console import lockouts
from console.access import console_view, posted
from console.failures import NotFound
from console.forms import ApiTokenForm
from console.models import ApiToken, AuditEvent, Role
from console.scoping import get_scoped_or_404, scoped
from console.services import create_api_token, revoke_api_token
from console.throttle import minutes_to_wait


@console_view()
def dashboard(request):
    from roleplay.selectors import dashboard_stats

    return render(request, "console/dashboard.html", {"stats": dashboard_stats(request.tenant)})


def login_locked_out(request, *args, **kwargs):
    """django-axes' lockout answer (``AXES_LOCKOUT_CALLABLE``): the login page again, with
    how long to wait, as a 429 with ``Retry-After``, rather than a bare error page. The
    credentials are not echoed back."""
    handler = AxesProxyHandler.get_implementation()
    credentials = getattr(request, "axes_credentials", None)
    minutes = minutes_to_wait(handler.retry_after(request, credentials))
    context = {
        "form": AuthenticationForm(request),
        "locked_out": True,
        "wait_minutes": minutes,
        # The whole address, or only this account at it (the usual case).
        "address_locked": ("ip_address",) in handler.locks(request, credentials),
    }
    response = render(request, "console/login.html", context, status=429)
    response["Retry-After"] = str(minutes * 60)
    return response


# --- API tokens (admins only, reads included: the list names every integration) ----------


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def token_list(request):
    tokens = scoped(ApiToken, request.tenant).order_by("revoked_at", "-created_at")
    return render(request, "console/tokens/list.html", {"tokens": tokens})


@never_cache
@console_view(read=Role.ADMIN, write=Role.ADMIN)
def token_create(request):
    """On success the raw token is rendered once, in this response only (never redirected,
    never put in the session), and the response is marked uncacheable."""
    form = ApiTokenForm(posted(request))
    if request.method == "POST" and form.is_valid():
        token, raw = create_api_token(
            request.tenant, form.cleaned_data["name"], form.cleaned_data["scopes"]
        )
        return render(request, "console/tokens/created.html", {"token": token, "raw": raw})
    return render(request, "console/tokens/form.html", {"form": form})


@console_view(read=Role.ADMIN, write=Role.ADMIN)
@require_POST
def token_revoke(request, pk: int):
    token = get_scoped_or_404(ApiToken, request.tenant, pk=pk)
    revoke_api_token(token)
    flash.success(request, f"Token “{token.name}” ({token.prefix}) revoked.")
    return redirect("tokens")


# --- Audit log (admins only: it names accounts and client addresses) -----------------------

AUDIT_PAGE_SIZE = 50


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def audit_log(request):
    """The tenant's audit events, newest first. Attempts on names that match no account
    belong to no tenant and are listed only in Django's admin."""
    events = scoped(AuditEvent, request.tenant).select_related("user")
    page = Paginator(events, AUDIT_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "console/audit.html", {"page": page})


# --- Login lockouts (admins only: they name accounts and client addresses) -----------------


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def lockout_list(request):
    """The login locks in force that concern this tenant's accounts, with the time left."""
    rows = [
        (lock, minutes_to_wait(lock.time_left()))
        for lock in lockouts.tenant_lockouts(request.tenant)
    ]
    return render(request, "console/lockouts.html", {"rows": rows})


@console_view(read=Role.ADMIN, write=Role.ADMIN)
@require_POST
def lockout_unlock(request):
    kind = request.POST.get("kind", "")
    if kind not in lockouts.KINDS:
        raise Http404("no such lockout")
    address, username = request.POST.get("address", ""), request.POST.get("username", "")
    try:
        lockouts.unlock(
            request.tenant,
            kind=kind,
            address=address,
            username=username,
            by=request.user,
            request=request,
        )
    except NotFound as exc:
        raise Http404(exc.message) from None
    who = f"{username} at {address}" if kind == "account" else f"the address {address}"
    flash.success(request, f"Unlocked {who}: logging in works again at once.")
    return redirect("lockouts")
