"""Who may open a console page: one rule for every page of every app.

:func:`console_view` requires a login (redirect to the login page), a tenant membership
(else 403), and a role that depends on the HTTP method, so a viewer can read everything a
page shows but any write answers 403. The tenant comes from the membership and is put on
``request.tenant``; pages read through ``console.scoping`` so a foreign tenant's id is a 404.
Part of the shared kernel: it imports no app, so every app's pages can use it.
"""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied

from console.models import Role

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


def files(request):
    """The uploaded files of a POST, else None (as :func:`posted` for data)."""
    return request.FILES if request.method == "POST" else None
