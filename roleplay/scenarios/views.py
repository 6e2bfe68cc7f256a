"""Console pages of run modes (scenarios in the API and the seed: the console says "run
mode" so they are not taken for a card's Scenario text). The list, and one form to create or
edit a run mode: a guided section per capability with "Edit as JSON" for experts
(``roleplay.scenarios.forms``; docs/agentic.md), and templates to start from. Operators edit,
viewers read. Every save goes through ``roleplay.scenarios.services``: a refused config
object is shown next to the field its dotted path names, a stale version says so and keeps
what was typed, and nothing is written."""

from __future__ import annotations

from django.contrib import messages as flash
from django.shortcuts import redirect, render

from console.access import console_view, has_role, posted
from console.models import Role
from console.scoping import get_scoped_or_404, scoped
from console.storable import loads as loads_json
from roleplay.errors import Duplicate, FieldErrors
from roleplay.llm.gateway import resolve_config
from roleplay.models import Scenario
from roleplay.scenarios import guide
from roleplay.scenarios import services as scenarios
from roleplay.scenarios.forms import ScenarioForm, stored_configs
from roleplay.scenarios.services import ScenarioConfigInvalid, ScenarioVersionConflict
from roleplay.views import _confirm
from roleplay.workflows.views import editor_context


def _initial(scenario: Scenario) -> dict:
    return {
        "name": scenario.name,
        "description": scenario.description,
        "model_config": scenario.model_config_id,
        "preset": scenario.preset_id,
        "image_config": scenario.image_config_id,
        "memoryRuntime": scenario.memory_runtime,
        "version": scenario.version,
    }


def _save(form: ScenarioForm, request, scenario: Scenario | None) -> Scenario | None:
    data = {
        name: form.cleaned_data[name]
        for name in ("name", "description", "model_config", "preset", "image_config")
    }
    for seed in scenarios.CONFIG_FIELDS:
        data[seed] = form.cleaned_data[seed]
    try:
        if scenario is None:
            return scenarios.create_scenario(request.tenant, **data)
        version = form.cleaned_data.get("version") or 0
        return scenarios.update_scenario(scenario, version=version, **data)
    except ScenarioConfigInvalid as exc:
        message = exc.message.split(": ", 1)[-1]
        form.place_error(exc.details["field"], message)
        if exc.details["field"].startswith("workflow"):
            form.workflow_error = {**exc.details, "message": message}
    except ScenarioVersionConflict as exc:
        form.add_error(None, f"{exc.message} (your changes are still below)")
    except FieldErrors as exc:
        for field, problems in exc.by_field.items():
            for problem in problems:
                form.add_error(field if field in form.fields else None, problem)
    except Duplicate as exc:
        form.add_error("name", exc.message)
    return None


def _page(request, form: ScenarioForm, scenario: Scenario | None, status: int = 200):
    context = {"form": form, "scenario": scenario, "templates": guide.TEMPLATES}
    context["wf"] = editor_context(
        _workflow_shown(form, scenario),
        scenario.pk if scenario else None,
        getattr(form, "workflow_error", None),
    )
    return render(request, "roleplay/scenarios/form.html", context, status=status)


def _workflow_shown(form: ScenarioForm, scenario: Scenario | None):
    """The workflow the editor draws: what was posted (when it parses as JSON), else the
    stored one (a refused field is no longer in ``cleaned_data``, so the text is read)."""
    if form.is_bound:
        try:
            return loads_json(form.data.get("workflow") or "null")
        except ValueError:
            pass
    return scenario.workflow if scenario is not None else form.stored.get("workflow")


@console_view()
def scenario_list(request):
    rows = list(scoped(Scenario, request.tenant).select_related("model_config").order_by("name"))
    for row in rows:
        row.parts_on = parts_on(row)
    return render(request, "roleplay/scenarios/list.html", {"rows": rows})


PARTS = (
    ("agentic_v2", "Agent V2"),
    ("story_v1", "Story"),
    ("compact", "Compact"),
    ("pre_actor_director", "Pre-reply director"),
    ("dio", "DIO"),
    ("workflow", "Workflow"),
)


def parts_on(scenario: Scenario) -> list[str]:
    """The names of the parts a run mode has switched on (present and not disabled)."""
    on = []
    for field, label in PARTS:
        config = getattr(scenario, field)
        if isinstance(config, dict) and config.get("enabled", True) and config.get("mode") != "off":
            on.append(label)
    return on


@console_view()
def scenario_create(request):
    template = request.GET.get("template", "plain")
    actor = resolve_config(request.tenant)
    stored = guide.template_configs(template, actor.name if actor else "")
    form = ScenarioForm(posted(request), tenant=request.tenant, stored=stored)
    if request.method == "POST":
        if form.is_valid():
            scenario = _save(form, request, None)
            if scenario is not None:
                flash.success(request, f"Run mode “{scenario.name}” created.")
                return redirect("scenario_edit", pk=scenario.pk)
        return _page(request, form, None, status=422)
    name = guide.TEMPLATES.get(template, guide.TEMPLATES["plain"])[0]
    form.initial = {"name": name, "model_config": actor.pk if actor else None}
    form.initial |= form.initial_values(actor.name if actor else "")
    return _page(request, form, None)


@console_view()
def scenario_edit(request, pk):
    scenario = get_scoped_or_404(Scenario, request.tenant, pk=pk)
    stored = stored_configs(scenario)
    form = ScenarioForm(posted(request), tenant=request.tenant, stored=stored)
    if request.method == "POST":
        if form.is_valid() and _save(form, request, scenario) is not None:
            flash.success(request, f"Run mode “{scenario.name}” saved.")
            return redirect("scenario_edit", pk=scenario.pk)
        return _page(request, form, scenario, status=422)
    actor = scenario.model_config
    form.initial = _initial(scenario) | form.initial_values(actor.name if actor else "")
    if not has_role(request.membership, Role.OPERATOR):
        for field in form.fields.values():
            field.disabled = True
    return _page(request, form, scenario)


@console_view()
def scenario_delete(request, pk):
    scenario = get_scoped_or_404(Scenario, request.tenant, pk=pk)
    if request.method == "POST":
        scenarios.delete_scenario(scenario)
        flash.success(request, f"Run mode “{scenario.name}” deleted.")
        return redirect("scenarios")
    return _confirm(
        request,
        title=f"Delete run mode “{scenario.name}”?",
        message="Characters and conversations that use it run without a scenario.",
        cancel_url="/console/scenarios/",
    )
