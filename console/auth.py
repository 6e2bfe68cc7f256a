"""API authentication: tenant-scoped bearer tokens (hashed at rest) or a console session."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions

from console.models import ApiToken, Role, Scope, hash_token

ROLE_SCOPES = {
    Role.ADMIN: {Scope.ADMIN, Scope.CONTENT, Scope.PLAY},
    Role.OPERATOR: {Scope.CONTENT, Scope.PLAY},
    Role.VIEWER: set(),
}
# last_used_at is a hint, not an audit log: write it at most once a minute per token.
_TOUCH_EVERY = timedelta(minutes=1)


class Principal:
    """Who is calling: the tenant, the granted scopes and whether writes are allowed."""

    def __init__(self, tenant, scopes, *, user=None, token=None, read_only=False):
        self.tenant = tenant
        self.scopes = set(scopes)
        self.user = user
        self.token = token
        self.read_only = read_only
        self.is_authenticated = True

    def has_scope(self, scope: str) -> bool:
        return Scope.ADMIN in self.scopes or scope in self.scopes


def principal_for_user(user) -> Principal | None:
    membership = getattr(user, "membership", None) if user and user.is_authenticated else None
    if membership is None:
        return None
    return Principal(
        membership.tenant,
        ROLE_SCOPES[Role(membership.role)],
        user=user,
        read_only=membership.role == Role.VIEWER,
    )


def authenticate_token(raw: str) -> ApiToken | None:
    token = (
        ApiToken.objects.select_related("tenant")
        .filter(token_hash=hash_token(raw), revoked_at__isnull=True)
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > _TOUCH_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return self._session(request)
        parts = header.split()
        # The auth scheme is case-insensitive (RFC 9110 §11.1): "bearer" is "Bearer".
        if len(parts) != 2 or parts[0].lower() != self.keyword.lower():
            raise exceptions.AuthenticationFailed("malformed Authorization header")
        token = authenticate_token(parts[1])
        if token is None:
            raise exceptions.AuthenticationFailed("invalid or revoked token")
        return Principal(token.tenant, token.scopes, token=token), token

    def _session(self, request):
        user = getattr(request._request, "user", None)
        principal = principal_for_user(user)
        if principal is None:
            return None
        authentication.SessionAuthentication().enforce_csrf(request)
        return principal, None

    def authenticate_header(self, request):
        return self.keyword
