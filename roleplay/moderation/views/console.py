"""The console's moderation pages (operators): the queue of reports and flags, a case with
its context and the actions on it, the players' sanctions, and the policy (admins)."""

from __future__ import annotations

from django.contrib import messages as flash
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view, posted
from console.failures import DomainError
from console.models import Player, Role
from console.scoping import get_scoped_or_404
from roleplay.moderation import selectors, services
from roleplay.moderation.forms import ActForm, PolicyForm
from roleplay.moderation.models import Case, CaseStatus, Sanction

STATUSES = ("open", "dismissed", "actioned", "")


@console_view(read=Role.OPERATOR, write=Role.OPERATOR)
def queue(request):
    status = request.GET.get("status", CaseStatus.OPEN)
    status = status if status in STATUSES else CaseStatus.OPEN
    cases = list(selectors.queue(request.tenant, status)[: selectors.QUEUE_SHOWN])
    sanctions = (
        Sanction.objects.filter(tenant=request.tenant, lifted_at__isnull=True)
        .select_related("player")
        .order_by("-created_at")[:100]
    )
    context = {"cases": cases, "status": status, "statuses": STATUSES, "sanctions": sanctions}
    return render(request, "roleplay/moderation/queue.html", context)


@console_view(read=Role.OPERATOR, write=Role.OPERATOR)
def case(request, pk):
    row = get_scoped_or_404(Case, request.tenant, pk=pk)
    return _case_page(request, row, ActForm())


def _case_page(request, row, form, status=200):
    context = {
        "case": row,
        "context": selectors.context_of(row),
        "form": form,
        "sanction": selectors.sanction_of(row.player_id) if row.player_id else None,
    }
    return render(request, "roleplay/moderation/case.html", context, status=status)


@console_view(read=Role.OPERATOR, write=Role.OPERATOR)
@require_POST
def act(request, pk):
    row = get_scoped_or_404(Case, request.tenant, pk=pk)
    form = ActForm(posted(request))
    if not form.is_valid():
        return _case_page(request, row, form, status=400)
    data = form.cleaned_data
    try:
        services.act(row, data["action"], by=request.user, request=request,
                     reason=data["reason"], hours=data["hours"])  # fmt: skip
    except DomainError as exc:
        form.add_error(None, exc.message)
        return _case_page(request, row, form, status=422)
    flash.success(request, f"Done: {data['action'].replace('_', ' ')}.")
    return redirect("moderation_queue")


@console_view(read=Role.OPERATOR, write=Role.OPERATOR)
@require_POST
def lift(request, pk):
    """Lift a player's sanctions in force."""
    player = get_scoped_or_404(Player, request.tenant, pk=pk)
    services.lift(player, by=request.user, request=request)
    flash.success(request, "Lifted.")
    return redirect("moderation_queue")


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def policy(request):
    row = selectors.settings_of(request.tenant)
    if request.method == "POST":
        form = PolicyForm(posted(request), tenant=request.tenant)
        if form.is_valid():
            try:
                services.set_policy(request.tenant, by=request.user, request=request,
                                    **form.cleaned_data)  # fmt: skip
            except DomainError as exc:
                form.add_error("rules", exc.message)
            else:
                flash.success(request, "Saved.")
                return redirect("moderation_policy")
        return render(request, "roleplay/moderation/policy.html", {"form": form}, status=400)
    import json

    initial = {
        "enabled": row.enabled, "check_input": row.check_input, "check_reply": row.check_reply,
        "show_nsfw": row.show_nsfw, "model_config": row.model_config_id,
        "rules": json.dumps(row.rules or {}, indent=2, ensure_ascii=False),
    }  # fmt: skip
    form = PolicyForm(initial=initial, tenant=request.tenant)
    return render(request, "roleplay/moderation/policy.html", {"form": form})
