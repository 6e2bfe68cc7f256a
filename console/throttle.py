"""Login throttling: django-axes' database handler with one failure limit per lockout key.

``settings.LOGIN_FAILURE_LIMITS`` maps each lockout key (a tuple of axes lockout
parameters) to the failures, within the cool-off, that lock it: a few per account *and*
address (guessing one account's password), more per address (spraying many accounts from one
place). Locking per account alone would let anyone lock a victim out from anywhere.

Axes compares a single failure count with a single limit (``AXES_FAILURE_LIMIT``, the
strictest of ours), so :meth:`LoginThrottle.get_failures` reports each key's failures in
units of that limit: a key reaches the common limit exactly when it reaches its own.

A successful login clears the account's own failures at that address, and nothing else:
axes' default also clears every attempt of the address, so one valid account of their own
would let a client wipe its guesses at other accounts between tries.

An attempt refused during a lock is not counted (``AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT``
is off), so a lock ends a cool-off after the failures that made it: knocking on a locked
door, with the right password or not, does not keep it shut. :func:`unlocks_at` says when
that is, for the lockout page and the console's lockout list alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timedelta

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off, get_lockout_parameters
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Sum
from django.utils import timezone

from console import audit
from console.models import AuditAction


def attempted_username(request, credentials: dict | None = None) -> str | None:
    """The login name axes counts (``AXES_USERNAME_CALLABLE``): as typed, cut to the longest
    name an account can have. Django's login forms do not enforce that length, and axes
    stores at most 255 characters, so a long name would otherwise end the request in a 500."""
    field = get_user_model().USERNAME_FIELD
    source = credentials if credentials else getattr(request, "data", request.POST)
    name = source.get(field)
    if not isinstance(name, str):
        return name
    return name[: get_user_model()._meta.get_field(field).max_length or 150]


def lockout_key(parameter) -> tuple[str, ...]:
    """An axes lockout parameter (``"ip_address"`` or ``["username", "ip_address"]``) as the
    key of ``LOGIN_FAILURE_LIMITS``."""
    return (parameter,) if isinstance(parameter, str) else tuple(parameter)


class LoginThrottle(AxesDatabaseHandler):
    """Axes' database handler (attempts live in PostgreSQL, shared by every web process)."""

    def _keyed_attempts(self, request, credentials):
        """(lockout key, queryset of that key's attempts within the cool-off) pairs."""
        keys = [lockout_key(p) for p in get_lockout_parameters(request, credentials)]
        return zip(keys, self.get_user_attempts(request, credentials), strict=True)

    def get_failures(self, request, credentials: dict | None = None) -> int:
        common = settings.AXES_FAILURE_LIMIT
        worst = 0
        for key, attempts in self._keyed_attempts(request, credentials):
            failures = attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0
            worst = max(worst, failures * common // settings.LOGIN_FAILURE_LIMITS[key])
        return worst

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs):
        """Count the failure as axes does, and audit the moment a lock begins."""
        was_locked = request is not None and self.is_locked(request, credentials)
        super().user_login_failed(sender, credentials, request, **kwargs)
        if request is not None and request.axes_locked_out and not was_locked:
            audit.record(
                AuditAction.LOGIN_LOCKED_OUT,
                request=request,
                user=audit.account_named(attempted_username(request, credentials)),
                details={"failures": request.axes_failures_since_start},
            )

    def reset_user_attempts(self, request, credentials: dict | None = None) -> int:
        count = 0
        for key, attempts in self._keyed_attempts(request, credentials):
            if "username" in key:
                count += attempts.delete()[0]
        return count

    def locks(self, request, credentials: dict | None = None) -> dict[tuple[str, ...], datetime]:
        """The lockout keys of this request that are locked, each with when it unlocks."""
        cool_off = get_cool_off(request) or timedelta(0)
        found = {}
        for key, attempts in self._keyed_attempts(request, credentials):
            limit = settings.LOGIN_FAILURE_LIMITS[key]
            # Newest first, and no more rows than the limit: each holds at least one failure.
            rows = attempts.order_by("-attempt_time").values_list(
                "attempt_time", "failures_since_start"
            )[:limit]
            end = unlocks_at(rows, limit, cool_off)
            if end is not None:
                found[key] = end
        return found

    def retry_after(self, request, credentials: dict | None = None) -> timedelta:
        """How long until every lock on this request has ended."""
        ends = self.locks(request, credentials).values()
        if not ends:
            return get_cool_off(request) or timedelta(0)
        return max(max(ends) - timezone.now(), timedelta(0))


def unlocks_at(
    attempts: Iterable[tuple[datetime, int]], limit: int, cool_off: timedelta
) -> datetime | None:
    """When a lockout key stops being locked, given its counted attempts within the cool-off
    as (time of the row's newest failure, failures) pairs; None when it is not locked.

    Rows leave the count a cool-off after their newest failure, oldest first, so the lock
    ends when the newest rows that still add up to ``limit`` have all aged out."""
    total = 0
    for time, failures in sorted(attempts, reverse=True):
        total += failures
        if total >= limit:
            return time + cool_off
    return None


def minutes_to_wait(delay: timedelta) -> int:
    """A wait rounded up to whole minutes (at least one), as the lockout page says it."""
    return max(1, math.ceil(delay.total_seconds() / 60))
