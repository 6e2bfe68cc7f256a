"""Console pages of the workflow tools: one list of the tenant's HTTP endpoints and MCP
servers, an editor for each, and an MCP server's "test connection" (htmx swaps the tools it
lists into the row; a plain POST gets a page). Admins write; everyone in the tenant reads."""

from __future__ import annotations

from django.contrib import messages as flash
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view, has_role, posted
from console.models import Role
from console.scoping import get_scoped_or_404
from roleplay.views import _read_only, _write
from roleplay.workflows.tool_models import HttpToolEndpoint, McpServer
from roleplay.workflows.tools import selectors, services
from roleplay.workflows.tools.calls import key_status
from roleplay.workflows.tools.forms import HttpToolEndpointForm, McpServerForm
from roleplay.workflows.tools.server_test import run_server_test

LIST_URL = "/console/workflow-tools/"
KINDS = {
    "http": (HttpToolEndpoint, HttpToolEndpointForm, "HTTP endpoint",
             services.create_http_endpoint, services.update_http_endpoint,
             services.delete_http_endpoint),
    "mcp": (McpServer, McpServerForm, "MCP server", services.create_mcp_server,
            services.update_mcp_server, services.delete_mcp_server),
}  # fmt: skip


@console_view()
def tool_list(request):
    query = request.GET.get("q", "").strip()
    context = {
        "query": query,
        "endpoints": [(e, key_status(e.api_key_env))
                      for e in selectors.http_endpoints(request.tenant, query)],
        "servers": [(s, key_status(s.api_key_env))
                    for s in selectors.mcp_servers(request.tenant, query)],
    }  # fmt: skip
    return render(request, "roleplay/workflow_tools/list.html", context)


def _form_page(request, kind: str, row, form):
    context = {"form": form, "row": row, "kind": kind, "noun": KINDS[kind][2],
               "key_status": key_status(row.api_key_env) if row else ""}  # fmt: skip
    return render(request, "roleplay/workflow_tools/form.html", context)


def _create(request, kind: str):
    _model, form_class, noun, create, _update, _delete = KINDS[kind]
    form = form_class(posted(request))
    if request.method == "POST" and form.is_valid():
        row = _write(form, create, request.tenant)
        if row is not None:
            flash.success(request, f"{noun} “{row.name}” created.")
            return redirect(LIST_URL)
    return _form_page(request, kind, None, form)


def _edit(request, kind: str, pk):
    model, form_class, noun, _create, update, _delete = KINDS[kind]
    row = get_scoped_or_404(model, request.tenant, pk=pk)
    form = form_class(posted(request), instance=row)
    if request.method == "POST" and form.is_valid():
        if _write(form, update, row) is not None:
            flash.success(request, f"{noun} “{row.name}” saved.")
            return redirect(LIST_URL)
    if not has_role(request.membership, Role.ADMIN):
        _read_only(form)
    return _form_page(request, kind, row, form)


def _delete(request, kind: str, pk):
    model, _form, noun, _create, _update, delete = KINDS[kind]
    row = get_scoped_or_404(model, request.tenant, pk=pk)
    if request.method == "POST":
        delete(row)
        flash.success(request, f"{noun} “{row.name}” deleted.")
        return redirect(LIST_URL)
    return render(request, "console/confirm.html", {
        "title": f"Delete {noun} “{row.name}”?",
        "message": "Workflow nodes that name it are refused from then on.",
        "warning": "", "cancel_url": LIST_URL,
    })  # fmt: skip


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def http_create(request):
    return _create(request, "http")


@console_view(write=Role.ADMIN)
def http_edit(request, pk):
    return _edit(request, "http", pk)


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def http_delete(request, pk):
    return _delete(request, "http", pk)


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def mcp_create(request):
    return _create(request, "mcp")


@console_view(write=Role.ADMIN)
def mcp_edit(request, pk):
    return _edit(request, "mcp", pk)


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def mcp_delete(request, pk):
    return _delete(request, "mcp", pk)


@console_view(write=Role.OPERATOR)
@require_POST
def mcp_test(request, pk):
    """List the server's tools (no tool is called); htmx swaps the result into the row."""
    server = get_scoped_or_404(McpServer, request.tenant, pk=pk)
    context = {"server": server, "result": run_server_test(server)}
    if getattr(request, "htmx", False):
        return render(request, "roleplay/workflow_tools/_test_result.html", context)
    return render(request, "roleplay/workflow_tools/test.html", context)
