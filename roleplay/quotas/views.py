"""The console's plans page (create, change, delete, give to a player) and the player app's
usage page."""

from __future__ import annotations

from django.contrib import messages as flash
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view, posted
from console.failures import DomainError, FieldErrors
from console.scoping import get_scoped_or_404
from roleplay.accounts.access import player_view

from . import selectors, services
from .forms import AssignForm, PlanForm, initial_of
from .models import Plan, PlanAssignment, PlanDefault

ASSIGNMENTS_SHOWN = 200


def _page(request, **extra):
    tenant = request.tenant
    context = {
        "plans": list(selectors.plans(tenant)),
        "defaults": selectors.defaults(tenant),
        "form": PlanForm(tenant=tenant),
        "assign_form": AssignForm(tenant=tenant),
        "assignments": list(
            PlanAssignment.objects.filter(tenant=tenant)
            .select_related("player", "plan")
            .order_by("player__external_id")[:ASSIGNMENTS_SHOWN]
        ),
        **extra,
    }
    return render(request, "roleplay/quotas/plans.html", context)


def _save(request, form, save) -> bool:
    """Run ``save`` on a valid form; a service's refusal goes onto the form."""
    if not form.is_valid():
        return False
    try:
        save(form.values())
    except FieldErrors as exc:
        for field, errors in exc.by_field.items():
            for error in errors:
                form.add_error(field if field in form.fields else None, error)
        return False
    except DomainError as exc:
        form.add_error(None, exc.message)
        return False
    return True


@console_view()
def plans(request):
    """The tenant's plans; POST creates one."""
    form = PlanForm(posted(request), tenant=request.tenant)
    if request.method == "POST":
        by = {"by": request.user, "request": request}
        if _save(request, form, lambda data: services.create_plan(request.tenant, **by, **data)):
            flash.success(request, "Plan created.")
            return redirect("plans")
        return _page(request, form=form)
    return _page(request)


@console_view()
def plan_edit(request, pk):
    plan = get_scoped_or_404(Plan, request.tenant, pk=pk)
    routes = list(PlanDefault.objects.filter(plan=plan).values_list("route", flat=True))
    form = PlanForm(posted(request), tenant=request.tenant, initial=initial_of(plan, routes))
    by = {"by": request.user, "request": request}
    if request.method == "POST" and _save(
        request, form, lambda values: services.update_plan(plan, **by, **values)
    ):
        flash.success(request, "Plan saved.")
        return redirect("plans")
    return render(request, "roleplay/quotas/plan_edit.html", {"plan": plan, "form": form})


@console_view()
@require_POST
def plan_delete(request, pk):
    """Delete a plan; its players fall back to their route's default."""
    plan = get_scoped_or_404(Plan, request.tenant, pk=pk)
    services.delete_plan(plan, release=True, by=request.user, request=request)
    flash.success(request, f"Plan {plan.name} deleted.")
    return redirect("plans")


@console_view()
@require_POST
def plan_assign(request):
    """Give a player a plan (none: their route's default again)."""
    form = AssignForm(request.POST, tenant=request.tenant)
    if not form.is_valid():
        return _page(request, assign_form=form)
    services.assign_plan(
        form.cleaned_data["player"], form.cleaned_data["plan"], by=request.user, request=request
    )
    flash.success(request, "Plan given.")
    return redirect("plans")


@player_view
def usage(request):
    """What the signed-in player used of their plan."""
    return render(request, "app/usage.html", {"usage": selectors.usage_summary(request.player)})
