"""Console shell pages (dashboard, API tokens, audit log, login lockout) and the access rule of
every page.

Every console page goes through :func:`console_view`: it requires a login (redirect to the
login page), a tenant membership (else 403), and a role that depends on the HTTP method, so
a viewer can read everything a page shows but any write answers 403. The tenant comes from
the membership and is put on ``request.tenant``; pages read through ``console.scoping`` so a
foreign tenant's id is a 404.
"""

from __future__ import annotations

from functools import wraps

from axes.handlers.proxy import AxesProxyHandler
from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from console.forms import ApiTokenForm
from console.models import ApiToken, AuditEvent, Role
from console.scoping import get_scoped_or_404, scoped
from console.services import create_api_token, revoke_api_token
from console.throttle import minutes_to_wait

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
ROLE_RANK = {Role.VIEWER: 0, Role.OPERATOR: 1, Role.ADMIN: 2}


def has_role(membership, needed: str) -> bool:
    """Whether ``membership`` is at least ``needed`` (viewer < operator < admin)."""
    if membership is None:
        return False
    return ROLE_RANK.get(membership.role, -1) >= ROLE_RANK[needed]


def console_view(*, read: str = Role.VIEWER, write: str = Role.OPERATOR):
    """Decorate a console page: login, membership, and ``read``/``write`` minimum roles.

    Safe methods need ``read``, every other method needs ``write``. A denied role is a 403
    (the object's tenant is already the user's, so nothing leaks by saying "forbidden").
    """

    def decorate(view):
        @login_required
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            membership = getattr(request.user, "membership", None)
            if membership is None:
                raise PermissionDenied("this account has no tenant")
            needed = read if request.method in SAFE_METHODS else write
            if not has_role(membership, needed):
                raise PermissionDenied("your role does not allow this")
            request.membership = membership
            request.tenant = membership.tenant
            return view(request, *args, **kwargs)

        return wrapped

    return decorate


def posted(request):
    """The form data of a POST, else None: an empty POST must still bind (and fail) the form,
    which ``request.POST or None`` would not."""
    return request.POST if request.method == "POST" else None


@console_view()
def dashboard(request):
    from roleplay.selectors import dashboard_stats

    return render(request, "console/dashboard.html", {"stats": dashboard_stats(request.tenant)})


def login_locked_out(request, *args, **kwargs):
    """django-axes' lockout answer (``AXES_LOCKOUT_CALLABLE``): the login page again, with
    how long to wait, as a 429 with ``Retry-After``, rather than a bare error page. The
    credentials are not echoed back."""
    wait = AxesProxyHandler.get_implementation().retry_after(
        request, getattr(request, "axes_credentials", None)
    )
    minutes = minutes_to_wait(wait)
    response = render(
        request,
        "console/login.html",
        {"form": AuthenticationForm(request), "locked_out": True, "wait_minutes": minutes},
        status=429,
    )
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
