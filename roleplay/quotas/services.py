"""Writes of plans: create, change and delete a plan, give one to a player, set the default
of a sign-up route. Every door (console pages, the REST API, ``seed_demo``) comes here.

Each change of a plan or of a player's plan is audited (``plan.*``), ``by`` the console user
or the API token's name (``console.audit.actor``); a refused change records nothing."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from console import audit
from console.failures import Conflict, FieldErrors
from console.models import AuditAction
from roleplay.models import ModelConfig

from .errors import PlanInUse
from .models import ROUTES, Plan, PlanAssignment, PlanDefault

LIMITS = (
    "messages_per_day",
    "tokens_per_day",
    "tokens_per_month",
    "max_reply_tokens",
    "max_context_tokens",
)
FEATURES = ("images",)
"""What a plan may allow beyond chat."""
MAX_NAME = 100
MAX_LIMIT = 2**31 - 1


def _checked(tenant, fields: dict) -> tuple[dict, list | None]:
    """The plan's fields as stored, and its model configs (None: unchanged); FieldErrors
    for every field that breaks a rule."""
    errors: dict[str, list[str]] = {}
    out: dict = {}
    if "name" in fields:
        name = fields["name"]
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            errors["name"] = [f"1 to {MAX_NAME} characters"]
        else:
            out["name"] = name.strip()
    for key in LIMITS:
        if key in fields:
            value = fields[key]
            ok = value is None or (
                isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_LIMIT
            )
            if not ok:
                errors[key] = [f"null (unlimited) or a whole number from 0 to {MAX_LIMIT}"]
            else:
                out[key] = value
    if "features" in fields:
        features = fields["features"]
        if not isinstance(features, list) or any(f not in FEATURES for f in features):
            errors["features"] = [f"a list of: {', '.join(FEATURES)}"]
        else:
            out["features"] = sorted(set(features))
    configs = None
    if "model_configs" in fields:
        configs = list(fields["model_configs"] or [])
        ids = [getattr(c, "pk", c) for c in configs]
        found = list(ModelConfig.objects.filter(tenant=tenant, pk__in=ids))
        if len(found) != len(set(ids)):
            errors["model_configs"] = ["model configs of this tenant"]
        configs = found
    if errors:
        raise FieldErrors(errors)
    return out, configs


def _name_taken() -> Conflict:
    return Conflict("plan_name_taken", "a plan of this name exists")


def _routes(fields: dict) -> list[str] | None:
    if "default_for" not in fields:
        return None
    routes = fields["default_for"]
    if not isinstance(routes, list) or any(r not in ROUTES for r in routes):
        raise FieldErrors({"default_for": [f"a list of: {', '.join(ROUTES)}"]})
    return sorted(set(routes))


def _audit(action: str, plan: Plan, by, request, **details) -> None:
    details = {"plan": str(plan.pk), "name": plan.name, **details}
    audit.record_by(action, by, tenant=plan.tenant, request=request, details=details)


def create_plan(tenant, *, by=None, request=None, **fields) -> Plan:
    """A new plan; a null limit is unlimited, no model configs: all. ``default_for``: the
    routes whose default it becomes."""
    if "name" not in fields:
        raise FieldErrors({"name": ["required"]})
    values, configs = _checked(tenant, fields)
    routes = _routes(fields)
    try:
        with transaction.atomic():
            plan = Plan.objects.create(tenant=tenant, **values)
            if configs:
                plan.model_configs.set(configs)
            _make_default(plan, routes)
            _audit(AuditAction.PLAN_CREATED, plan, by, request, fields=sorted(fields))
    except IntegrityError as exc:
        raise _name_taken() from exc
    return plan


def update_plan(plan: Plan, *, by=None, request=None, **fields) -> Plan:
    """Change a plan's fields (those given); its players get the new limits at once."""
    values, configs = _checked(plan.tenant, fields)
    routes = _routes(fields)
    try:
        with transaction.atomic():
            for key, value in values.items():
                setattr(plan, key, value)
            plan.save()
            if configs is not None:
                plan.model_configs.set(configs)
            _make_default(plan, routes)
            _audit(AuditAction.PLAN_CHANGED, plan, by, request, fields=sorted(fields))
    except IntegrityError as exc:
        raise _name_taken() from exc
    return plan


def _make_default(plan: Plan, routes: list[str] | None) -> None:
    """The plan becomes the default of exactly ``routes`` (None: unchanged)."""
    if routes is None:
        return
    PlanDefault.objects.filter(plan=plan).exclude(route__in=routes).delete()
    for route in routes:
        set_default(plan.tenant, route, plan)


def delete_plan(plan: Plan, *, release: bool = False, by=None, request=None) -> None:
    """Delete a plan; 409 ``plan_in_use`` while players or defaults use it, unless
    ``release`` (its players fall back to their route's default)."""
    with transaction.atomic():
        players = PlanAssignment.objects.filter(plan=plan).count()
        routes = list(PlanDefault.objects.filter(plan=plan).values_list("route", flat=True))
        if (players or routes) and not release:
            raise PlanInUse(
                message="players or sign-up routes use this plan",
                details={"players": players, "routes": routes},
            )
        _audit(AuditAction.PLAN_DELETED, plan, by, request, players=players, routes=routes)
        plan.delete()


@transaction.atomic
def assign_plan(player, plan: Plan | None, *, by=None, request=None) -> None:
    """Give ``player`` the plan (None: their route's default again)."""
    if plan is None:
        PlanAssignment.objects.filter(player=player).delete()
    elif plan.tenant_id != player.tenant_id:
        raise FieldErrors({"plan": ["a plan of this tenant"]})
    else:
        PlanAssignment.objects.update_or_create(
            player=player, defaults={"plan": plan, "tenant_id": player.tenant_id}
        )
    details = {"player": str(player.pk), "plan": str(plan.pk) if plan else None,
               "name": plan.name if plan else None}  # fmt: skip
    audit.record_by(
        AuditAction.PLAN_ASSIGNED, by, tenant=player.tenant, request=request, details=details
    )


def set_default(tenant, route: str, plan: Plan | None) -> None:
    """The plan of players who came by ``route`` (``operator``, ``invite``, ``open``, or
    ``none``: without an account) and were given none; None: unlimited."""
    if route not in ROUTES:
        raise FieldErrors({"route": [f"one of {', '.join(ROUTES)}"]})
    if plan is None:
        PlanDefault.objects.filter(tenant=tenant, route=route).delete()
        return
    if plan.tenant_id != tenant.pk:
        raise FieldErrors({"plan": ["a plan of this tenant"]})
    PlanDefault.objects.update_or_create(tenant=tenant, route=route, defaults={"plan": plan})
