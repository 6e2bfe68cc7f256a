"""Console pages of declared workflows: a conversation's workflow runs with their node
traces (``/console/conversations/<id>/workflow-runs/``), and the editor's drawing and
in-place messages for the run-mode form (:func:`editor_context`, used by
``roleplay.scenarios.views``)."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.shortcuts import render

from console.access import console_view
from console.scoping import get_scoped_or_404
from roleplay.models import Conversation
from roleplay.workflows import registry
from roleplay.workflows.checks import problems_by_node
from roleplay.workflows.graph import workflow_graph
from roleplay.workflows.selectors import runs_of

PAGE_SIZE = 20


@console_view()
def conversation_workflow_runs(request, pk):
    conversation = get_scoped_or_404(
        Conversation.objects.select_related("character"), request.tenant, pk=pk
    )
    page = Paginator(runs_of(request.tenant, conversation), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    context = {"conversation": conversation, "page": page, "runs": list(page.object_list)}
    return render(request, "roleplay/workflows/runs.html", context)


def editor_context(raw: Any, scenario_id: Any, save_error: dict | None = None) -> dict[str, Any]:
    """The workflow editor's drawing, every problem by node (and of the whole), and the
    registered capabilities with their input schemas. ``save_error``: the details of the
    refused save (its node is marked even when the text no longer parses)."""
    by_node: dict[str, list[str]] = {}
    general: list[str] = []
    if raw:
        by_node, general = problems_by_node(raw, scenario_id)
    if save_error and save_error.get("node") and save_error["node"] not in by_node:
        by_node[save_error["node"]] = [save_error.get("message", "")]
    graph = workflow_graph(raw, {k: "; ".join(v) for k, v in by_node.items()})
    return {
        "graph": graph,
        "edges": graph.edge_paths(),
        "problems": by_node,
        "general_problems": general,
        "capabilities": registry.entries(),
    }
