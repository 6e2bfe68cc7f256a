"""Template context for the console shell: the user's tenant, role and navigation."""

from __future__ import annotations

from django.urls import reverse

from console.auth import Principal
from console.models import Role

# The console's navigation, and the only list of it: (label, URL name, least role that may
# open the page). Entries name routes, so an area without pages cannot appear (reverse()
# fails); an entry is shown only to the roles its page lets in.
NAV = [
    ("Worldbooks", "wb_books", Role.VIEWER),
    ("Characters", "characters", Role.VIEWER),
    ("Conversations", "conversations", Role.VIEWER),
    ("Players", "players", Role.VIEWER),
    ("Memory", "memory_entries", Role.VIEWER),
    ("Models", "model_configs", Role.VIEWER),
    ("Images", "image_configs", Role.VIEWER),
    ("Tools", "workflow_tools", Role.VIEWER),
    ("Presets", "presets", Role.VIEWER),
    ("Regex", "regex_scripts", Role.VIEWER),
    ("Run modes", "scenarios", Role.VIEWER),
    ("API tokens", "tokens", Role.ADMIN),
    ("Audit log", "audit", Role.ADMIN),
    ("Lockouts", "lockouts", Role.ADMIN),
    ("Backups", "backups_page", Role.ADMIN),
    ("Player app", "player_app", Role.ADMIN),
    ("Plans", "plans", Role.VIEWER),
    ("Moderation", "moderation_queue", Role.OPERATOR),
]


def nav_for(membership) -> list[tuple[str, str]]:
    """(label, URL) of the entries ``membership`` may open."""
    from console.access import has_role

    return [(label, reverse(name)) for label, name, role in NAV if has_role(membership, role)]


def identity(user, membership) -> str:
    """Who is signed in, as the header says it once: "tenant · user (role)"."""
    if user is None or not user.is_authenticated:
        return ""
    if membership is None:
        return user.get_username()
    return f"{membership.tenant.name} · {user.get_username()} ({membership.role})"


def console_context(request) -> dict:
    """The shell's context. A page that an API view renders (the API's docs) sees the
    caller DRF authenticated, a ``Principal``: its console user, if any, is the one shown
    (a token has none); reading it as a user was a 500 on ``/api/docs/`` sent with a token."""
    user = getattr(request, "user", None)
    if isinstance(user, Principal):
        user = user.user
    membership = getattr(user, "membership", None) if user and user.is_authenticated else None
    return {
        "nav": nav_for(membership),
        "membership": membership,
        "tenant": membership.tenant if membership else None,
        "who": identity(user, membership),
    }
