"""What a lorebook scope's bindings belong to (``engine.scopes``): nothing for the tenant's
global books, else a scenario, conversation or persona of the tenant.

The worldbook app finds them through the app registry rather than importing ``roleplay``
(as the character bindings page does), so it still stands alone (DESIGN.md's capability
rule). Another tenant's target, a malformed id and an unknown one are the same 404.
"""

from __future__ import annotations

from django.apps import apps

from console.scoping import LOOKUP_MISSES, scoped
from worldbook import errors
from worldbook.models import BindingScope

# The scopes a door edits (the character's are ``/prompt-bindings``) and their targets.
TARGETS = {
    BindingScope.GLOBAL: None,
    BindingScope.SCENARIO: "Scenario",
    BindingScope.CHAT: "Conversation",
    BindingScope.PERSONA: "Persona",
}


def check_scope(scope: str) -> str:
    """``scope`` when a door may edit it, else a 422 ``invalid_scope``."""
    if scope not in TARGETS:
        raise errors.Invalid(
            "invalid_scope",
            f"scope must be one of {', '.join(TARGETS)}",
            {"allowed": list(TARGETS)},
        )
    return scope


def target_id(tenant, scope: str, target: str | None) -> str:
    """The prompt id of ``scope``'s bindings for ``target``: "" for global books (which
    take no target), else the id of the tenant's scenario, conversation or persona (404
    ``scope_target_not_found`` when the tenant has none by that id)."""
    model_name = TARGETS[check_scope(scope)]
    if model_name is None:
        if target:
            raise errors.invalid("global books take no target_id", target_id=target)
        return ""
    if not target:
        raise errors.invalid(f"target_id (the {model_name.lower()}'s id) is required")
    model = apps.get_model("roleplay", model_name)
    try:
        found = scoped(model, tenant).filter(pk=target).values_list("pk", flat=True).first()
    except LOOKUP_MISSES:
        found = None
    if found is None:
        raise errors.NotFound(
            "scope_target_not_found",
            f"no {model_name.lower()} {target} in this tenant",
            {"scope": scope, "target_id": target},
        )
    return str(found)
