"""Template context for the console shell: the user's tenant, role and navigation."""

from __future__ import annotations

NAV = [
    ("Worldbooks", "/console/worldbooks/"),
    ("Characters", "/console/characters/"),
    ("Scenarios", "/console/scenarios/"),
    ("Conversations", "/console/conversations/"),
    ("Memory", "/console/memory/"),
    ("Story", "/console/story/"),
    ("Models", "/console/models/"),
    ("API tokens", "/console/tokens/"),
]


def console_context(request) -> dict:
    user = getattr(request, "user", None)
    membership = getattr(user, "membership", None) if user and user.is_authenticated else None
    return {
        "nav": NAV,
        "membership": membership,
        "tenant": membership.tenant if membership else None,
    }
