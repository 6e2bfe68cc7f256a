"""The selection playground: run ``select_context`` on chosen books and show every decision.

It is the console twin of ``POST /v1/context/select``: the form becomes a ``SelectRequest``
(so limits and error messages are the API's), and the result page lists the blocks, the
decision and reason code of every entry, the token count against the budget, degraded
notes and the selection fingerprint. A run reads only, so viewers may use it, except with a
conversation id: timed effects (sticky, cooldown, delay) then update that conversation's
state, which is an operator's write.
"""

from __future__ import annotations

import json
from collections import Counter

from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from pydantic import ValidationError

from console.access import console_view, has_role
from console.models import Role
from worldbook import retrieval, selectors
from worldbook.engine.schema import SelectRequest, validation_error_details
from worldbook.errors import WorldbookError
from worldbook.forms import PlaygroundForm
from worldbook.views.common import error_context, status_for


def _books(tenant) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """(checkbox choices, book names by id) of the tenant's books."""
    books = list(selectors.scoped_books(tenant).order_by("name"))
    choices = [(str(b.pk), f"{b.name} (r{b.head_revision})") for b in books]
    return choices, {str(b.pk): b.name for b in books}


def _attach(form: PlaygroundForm, exc: ValidationError) -> list[str]:
    """Put each pydantic error next to its form field; returns those without a field."""
    unplaced = []
    for error in validation_error_details(exc)["details"]["errors"]:
        loc = error["loc"]
        name = loc.split(".")[0]
        message = f"{loc}: {error['msg']}" if "." in loc else error["msg"]
        if name in form.fields:
            form.add_error(name, message)
        else:
            unplaced.append(f"{loc}: {error['msg']}")
    return unplaced


@console_view(write=Role.VIEWER)
def playground(request):
    choices, names = _books(request.tenant)
    context: dict = {"result": None, "error": None, "messages_unplaced": []}
    status = 200
    if request.method == "POST":
        form = PlaygroundForm(request.POST, book_choices=choices)
        if form.is_valid():
            status = _run(request, form, names, context)
        else:
            status = 422
    else:
        initial = {}
        wanted = request.GET.getlist("book")
        if wanted:
            initial["books"] = [value for value, _ in choices if value in wanted]
        form = PlaygroundForm(initial=initial or None, book_choices=choices)
    context.update(form=form, has_books=bool(choices))
    if request.htmx:
        # htmx does not swap 4xx answers; the fragment carries the error itself.
        return render(request, "worldbook/_playground.html", context)
    return render(request, "worldbook/playground.html", context, status=status)


def _run(request, form: PlaygroundForm, names: dict[str, str], context: dict) -> int:
    payload = form.select_payload()
    if payload.get("conversation_id") and not has_role(request.membership, Role.OPERATOR):
        raise PermissionDenied("timed effects of a conversation are written: operators only")
    try:
        select_request = SelectRequest.model_validate(payload)
    except ValidationError as exc:
        context["messages_unplaced"] = _attach(form, exc)
        return 422
    try:
        result = retrieval.select_context(request.tenant, select_request)
    except WorldbookError as exc:
        context["error"] = error_context(exc)
        return status_for(exc)
    decisions = [
        {
            **decision,
            "book_name": names.get(decision["book_id"], decision["book_id"]),
            "details_json": _json(decision["details"]) if decision["details"] else "",
        }
        for decision in result["decisions"]
    ]
    reasons = Counter(decision["reason"] for decision in decisions)
    budget = result["token_budget"] or 0
    context.update(
        result=result,
        decisions=decisions,
        reasons=sorted(reasons.items(), key=lambda item: (-item[1], item[0])),
        selected_count=sum(1 for d in decisions if d["selected"]),
        budget_percent=min(100, int(result["token_count"] * 100 / budget)) if budget else 0,
        snapshot_json=json.dumps(result["snapshot"], ensure_ascii=False, indent=2),
    )
    return 200


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
