"""Console pages of a conversation's Agent V2: the state in force read by its sections, its
revisions with what each changed, the specialists' ledger, the planning runs, and one run
with everything it did. Viewers read; operators restore an earlier revision, which writes a
new revision with its text through ``services.agent_state.restore`` (compare-and-set on the
head the page showed, so a state that moved meanwhile is refused, not overwritten)."""

from __future__ import annotations

import json

from django.contrib import messages as flash
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view
from console.numbers import parse_int
from console.owners import conversation_or_404
from console.scoping import get_scoped_or_404
from roleplay import labels
from roleplay.agentic import recorded
from roleplay.agentic import selectors as agent
from roleplay.agentic.engine import inputs as agentic_inputs
from roleplay.agentic.engine.ledger import TYPES as LEDGER_TYPES
from roleplay.agentic.services import agent_state
from roleplay.errors import NotFound
from roleplay.models import PlanningRun
from roleplay.prompting.director_state import split_sections
from roleplay.scenarios.selectors import scenario_for

MAX_INT = 2**31 - 1  # a revision number is a PostgreSQL integer


@console_view()
def conversation_agent(request, pk):
    """The scenario in force, the state and its sections, revisions, ledger and runs."""
    conversation = conversation_or_404(request, pk)
    scenario = scenario_for(conversation)
    asked_type = request.GET.get("type") or None
    kind = agent.ledger_type(asked_type)
    context = {
        "conversation": conversation,
        "conversation_title": labels.conversation_title(conversation),
        "scenario": scenario,
        "runs_agent_v2": agent.runs_agent_v2(scenario),
        "snapshot": agent_state.EMPTY,
        "sections": [],
        "history": [],
        "ledger": [],
        "ledger_types": LEDGER_TYPES,
        "ledger_type": kind,
        "unknown_type": asked_type if asked_type and kind is None else None,
        "runs": agent.planning_runs(conversation),
    }
    if scenario is not None:
        snapshot = agent_state.read_state(conversation, scenario)
        context.update(
            snapshot=snapshot,
            sections=split_sections(snapshot.state),
            history=agent.state_history(conversation, scenario),
            ledger=agent.ledger(conversation, scenario, type=kind),
        )
    return render(request, "roleplay/agent/overview.html", context)


@console_view()
@require_POST
def conversation_agent_restore(request, pk):
    """Write revision ``revision``'s text as a new revision, if the head is still the one
    the page showed (``expected_head``)."""
    conversation = conversation_or_404(request, pk)
    back = redirect("conversation_agent", pk=conversation.pk)
    scenario = scenario_for(conversation)
    if scenario is None:
        flash.error(request, "This conversation runs no scenario, so it has no state to restore.")
        return back
    revision = parse_int(request.POST.get("revision"))
    head = parse_int(request.POST.get("expected_head"))
    if revision is None or not 0 < revision <= MAX_INT or head is None or not 0 <= head < MAX_INT:
        flash.error(request, "Nothing restored: the form did not say which revision, or from what.")
        return back
    try:
        new = agent_state.restore(conversation, scenario, revision, expected_head=head)
    except agent_state.StaleWrite:
        now = agent_state.read_state(conversation, scenario).head
        flash.error(
            request,
            f"Nothing restored: the state moved on since this page was shown (from revision "
            f"{head} to {now}). Look at the newest revisions below and restore again if you "
            "still want to.",
        )
        return back
    except NotFound as exc:
        flash.error(request, f"Nothing restored: {exc.message}.")
        return back
    flash.success(request, f"Revision {revision} restored as revision {new}.")
    return back


@console_view()
def conversation_agent_run(request, pk, turn_id):
    """One planning run: its snapshot, specialists, Director attempts and model calls."""
    conversation = conversation_or_404(request, pk)
    run = get_scoped_or_404(
        PlanningRun.objects.select_related("scenario", "turn"),
        request.tenant,
        conversation=conversation,
        turn_id=turn_id,
    )
    snapshot = recorded.restore(run).snapshot if isinstance(run.snapshot, dict) else {}
    director = run.director if isinstance(run.director, dict) else {}
    return render(
        request,
        "roleplay/agent/run.html",
        {
            "conversation": conversation,
            "conversation_title": labels.conversation_title(conversation),
            "reply_text": labels.message_snippets(request.tenant, [run.assistant_message_id]).get(
                str(run.assistant_message_id)
            ),
            "run": run,
            "snapshot": snapshot,
            "guidance": agentic_inputs.recorded_guidance(snapshot),
            "director": director,
            "timings": agent.timings(run),
            "calls": agent.model_calls(run),
            "config_json": _pretty(snapshot.get("config")),
            "inputs_json": _pretty(snapshot.get("inputs")),
        },
    )


def _pretty(value) -> str:
    return "" if value is None else json.dumps(value, indent=2, ensure_ascii=False)
