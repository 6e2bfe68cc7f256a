"""Console page of the tenant's model calls (``ModelCall``: what for, which model, tokens,
latency, attempts, outcome; never a prompt or a key), newest first, filtered by purpose,
outcome or ids. The pages that record calls (consolidation runs, Agent V2 runs) link here
with ``?ids=``. A malformed filter is a 400 page with the reason; nothing is written."""

from __future__ import annotations

from typing import get_args

from django.core.paginator import Paginator
from django.shortcuts import render

from console.access import console_view
from console.numbers import page_number
from roleplay.llm.types import Outcome
from roleplay.models import ModelCall

PAGE_SIZE = 50
MAX_IDS = 100
OUTCOMES = get_args(Outcome)


@console_view()
def model_calls(request):
    """``?purpose=`` (exact), ``?outcome=``, ``?ids=1,2,3`` (at most :data:`MAX_IDS`)."""
    rows = ModelCall.objects.filter(tenant=request.tenant).select_related("config", "turn")
    purpose, outcome = request.GET.get("purpose", ""), request.GET.get("outcome", "")
    ids, problem = _ids(request.GET.get("ids", ""))
    if ids:
        rows = rows.filter(pk__in=ids)
    if purpose:
        rows = rows.filter(purpose=purpose[:50])
    if outcome:
        rows = rows.filter(outcome=outcome[:16])
    page = Paginator(rows.order_by("-created_at", "-id"), PAGE_SIZE).get_page(
        page_number(request.GET.get("page"))
    )
    purposes = (
        ModelCall.objects.filter(tenant=request.tenant)
        .order_by("purpose")
        .values_list("purpose", flat=True)
        .distinct()
    )
    context = {
        "page": page,
        "purposes": list(purposes),
        "outcomes": OUTCOMES,
        "wanted": {"purpose": purpose, "outcome": outcome, "ids": ",".join(map(str, ids))},
        "problem": problem,
    }
    return render(request, "roleplay/model_calls.html", context, status=400 if problem else 200)


def _ids(text: str) -> tuple[list[int], str]:
    """The ids of ``?ids=``, or ``([], reason)`` when it is not a list of numbers."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if len(parts) > MAX_IDS:
        return [], f"at most {MAX_IDS} ids"
    if not all(part.isdigit() and len(part) <= 18 for part in parts):
        return [], "ids are model call numbers, separated by commas"
    return [int(part) for part in parts], ""
