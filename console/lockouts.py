"""Login lockouts as a tenant's admin sees them, and the admin's unlock.

The rule of what is locked and until when lives in ``console.throttle``; this module only
finds the locks that concern one tenant and lifts one:

- an *account* lock (one of the tenant's accounts at one address) is the tenant's own:
  unlocking it clears that account's failures at that address;
- an *address* lock (too many failures from one address, for any names) is shown to a
  tenant whose accounts failed from there. Unlocking it clears the failures at the
  tenant's accounts and at names that match no account (people behind the address
  mistyping), and keeps those at other tenants' accounts: their count is theirs to clear.

Attempts carry no tenant (axes stores what was typed), so an account is the tenant's when
its name is that of one of the tenant's console users, or the e-mail of one of its players
(the player app's sign-in counts the e-mail a player types, normalised; their Django user
name is an opaque ``player-<hex>`` nobody types). Each unlock is audited.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from ipaddress import ip_address

from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q, QuerySet, Sum
from django.utils import timezone

from console import audit
from console.failures import NotFound
from console.models import AuditAction
from console.throttle import unlocks_at

ACCOUNT, ADDRESS = ("username", "ip_address"), ("ip_address",)
KINDS = {"account": ACCOUNT, "address": ADDRESS}


@dataclass(frozen=True)
class Lockout:
    kind: str  # "account" or "address"
    address: str
    username: str  # the locked account ("" for an address): a user name or a player's e-mail
    failures: int
    unlocks_at: datetime
    player: bool = False  # the account is a player's (``username`` is their e-mail)

    @property
    def dom_id(self) -> str:
        return f"lockout-{self.kind}-{self.username + '-' if self.username else ''}{self.address}"

    def time_left(self, now: datetime | None = None) -> timedelta:
        return max(self.unlocks_at - (now or timezone.now()), timedelta(0))


def _counted(now: datetime) -> QuerySet:
    """Attempts still within the cool-off (the ones that count towards a lock)."""
    return AccessAttempt.objects.filter(attempt_time__gte=now - settings.AXES_COOLOFF_TIME)


def _player_emails(tenant=None) -> QuerySet:
    from roleplay.accounts.models import PlayerAccount

    accounts = (
        PlayerAccount.objects.all()
        if tenant is None
        else PlayerAccount.objects.filter(tenant=tenant)
    )
    return accounts.values("email")


def _account_names(tenant=None) -> Q:
    """Attempts at ``tenant``'s accounts (at any tenant's when None): its console users' names
    and its players' e-mails."""
    User = get_user_model()
    users = User.objects.all() if tenant is None else User.objects.filter(membership__tenant=tenant)
    names = users.values(User.USERNAME_FIELD)
    return Q(username__in=names) | Q(username__in=_player_emails(tenant))


def _lock(
    kind: str, rows: QuerySet, address: str, username: str = "", player: bool = False
) -> Lockout | None:
    limit = settings.LOGIN_FAILURE_LIMITS[KINDS[kind]]
    newest = rows.order_by("-attempt_time").values_list("attempt_time", "failures_since_start")
    end = unlocks_at(newest[:limit], limit, settings.AXES_COOLOFF_TIME)
    if end is None:
        return None
    failures = rows.aggregate(n=Sum("failures_since_start"))["n"] or 0
    return Lockout(kind, address, username, failures, end, player)


def tenant_lockouts(tenant, *, now: datetime | None = None) -> list[Lockout]:
    """The locks in force that concern ``tenant``'s accounts, the longest wait first."""
    counted = _counted(now or timezone.now())
    mine = counted.filter(_account_names(tenant))
    found: list[Lockout] = []
    per_account = settings.LOGIN_FAILURE_LIMITS[ACCOUNT]
    accounts = list(
        mine.values("username", "ip_address")
        .annotate(n=Sum("failures_since_start"))
        .filter(n__gte=per_account)
    )
    names = {row["username"] for row in accounts}
    players = set(_player_emails(tenant).filter(email__in=names).values_list("email", flat=True))
    for row in accounts:
        rows = counted.filter(username=row["username"], ip_address=row["ip_address"])
        player = row["username"] in players
        found.append(_lock("account", rows, row["ip_address"], row["username"], player))
    per_address = settings.LOGIN_FAILURE_LIMITS[ADDRESS]
    addresses = (
        counted.filter(ip_address__in=mine.values("ip_address"))
        .values("ip_address")
        .annotate(n=Sum("failures_since_start"))
        .filter(n__gte=per_address)
    )
    for row in addresses:
        found.append(
            _lock("address", counted.filter(ip_address=row["ip_address"]), row["ip_address"])
        )
    locks = [lock for lock in found if lock is not None]
    return sorted(locks, key=lambda lock: (lock.unlocks_at, lock.dom_id), reverse=True)


def _find(tenant, kind: str, address: str, username: str) -> Lockout:
    try:
        ip_address(address)
    except ValueError:
        raise NotFound(message="no such lockout") from None
    for lock in tenant_lockouts(tenant):
        if (lock.kind, lock.address, lock.username) == (kind, address, username):
            return lock
    raise NotFound(message="no such lockout: it has ended, or is not one of your accounts'")


@transaction.atomic
def unlock(tenant, *, kind: str, address: str, username: str = "", by, request=None) -> int:
    """Lift one of ``tenant_lockouts(tenant)``; returns the attempts cleared. ``NotFound``
    when no such lock concerns the tenant (ended, another tenant's, or never was)."""
    lock = _find(tenant, kind, address, username or "")
    attempts = AccessAttempt.objects.filter(ip_address=lock.address)
    if kind == "account":
        attempts = attempts.filter(username=lock.username)
        details = {"kind": kind, "account": lock.username, "address": lock.address}
    else:
        others = ~_account_names() | Q(username__isnull=True)
        attempts = attempts.filter(_account_names(tenant) | others)
        details = {"kind": kind, "address": lock.address}
    cleared = attempts.delete()[0]
    audit.record(AuditAction.LOGIN_UNLOCKED, request=request, user=by, details=details)
    return cleared
