"""Scope checks: each API view names the scope it needs (``required_scope``)."""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission

from console.models import Scope


class HasTenant(BasePermission):
    """Authenticated principal with a tenant; writes need the view's scope."""

    def has_permission(self, request, view) -> bool:
        principal = request.user
        if principal is None or getattr(principal, "tenant", None) is None:
            return False
        request.tenant = principal.tenant
        scope = getattr(view, "required_scope", Scope.CONTENT)
        if request.method in SAFE_METHODS or getattr(view, "read_only_post", False):
            read_scopes = getattr(view, "read_scopes", (scope,))
            return principal.read_only or any(principal.has_scope(s) for s in read_scopes)
        if principal.read_only:
            return False
        return principal.has_scope(scope)
