"""Console pages of scenarios: the list, and one form to create or edit a scenario with its
four config objects as JSON (the seed's field names; docs/agentic.md). Operators edit,
viewers read. Every save goes through ``roleplay.services.scenarios``: a refused config
object is shown next to its box with the dotted path of the field, a stale version says so
and keeps what was typed, and nothing is written."""

from __future__ import annotations

import json

from django import forms
from django.contrib import messages as flash
from django.shortcuts import redirect, render

from console.access import console_view, has_role, posted
from console.models import Role
from console.scoping import get_scoped_or_404, scoped
from roleplay.errors import Duplicate, FieldErrors
from roleplay.models import ModelConfig, Preset, Scenario
from roleplay.services import scenarios
from roleplay.services.scenarios import ScenarioConfigInvalid, ScenarioVersionConflict
from roleplay.views import _confirm

# agenticV2, storyV1, compact, preActorDirector, externalMemory: JSON objects
CONFIG_BOXES = tuple(name for name in scenarios.CONFIG_FIELDS if name != "memoryRuntime")
MAX_JSON_CHARS = 100_000
# What each box takes beyond the generic note (docs/agentic.md, docs/story.md).
BOX_HELP = {
    "storyV1": 'Story, e.g. {"enabled": true, "modelConfigId": "<id or name>"}. Fields: '
    "initializerModelConfigId, modelCallTimeoutMs (45000; 1000–180000), postTurnTimeoutMs "
    "(90000; 1000–180000), maxStateBytes (60000; 4000–60000), seed (731), policy "
    "{world, narrative}. Runs instead of agenticV2; not with preActorDirector.",
}


class ScenarioForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(max_length=20_000, required=False, widget=forms.Textarea(
        attrs={"rows": 2}
    ))  # fmt: skip
    model_config = forms.ModelChoiceField(
        queryset=ModelConfig.objects.none(),
        required=False,
        empty_label="None",
        label="Actor model config",
        help_text="agenticV2.modelConfigs.actor must name this one (its id or name).",
    )
    preset = forms.ModelChoiceField(
        queryset=Preset.objects.none(), required=False, empty_label="The model config's"
    )
    memoryRuntime = forms.ChoiceField(  # noqa: N815
        choices=[(v, v) for v in ("internal", "external", "off")],
        initial="internal",
        required=False,
        label="memoryRuntime",
        help_text="Whose memory turns read: ours, the externalMemory service (prepare/commit), "
        "or none.",
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args, tenant, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model_config"].queryset = scoped(ModelConfig, tenant).order_by("name")
        self.fields["preset"].queryset = scoped(Preset, tenant).order_by("name")
        for name in CONFIG_BOXES:
            self.fields[name] = forms.CharField(
                required=False,
                max_length=MAX_JSON_CHARS,
                strip=True,
                label=name,
                widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
                help_text=(
                    BOX_HELP.get(name, "") + " A JSON object with the seed's field names; "
                    "empty: off."
                ).strip(),
            )

    def clean(self):
        data = super().clean()
        data["memoryRuntime"] = data.get("memoryRuntime") or "internal"
        for name in CONFIG_BOXES:
            text = data.get(name) or ""
            if not text:
                data[name] = None
                continue
            try:
                value = json.loads(text)
            except ValueError as exc:
                self.add_error(name, f"not valid JSON ({exc})")
                continue
            if not isinstance(value, dict):
                self.add_error(name, "must be a JSON object")
                continue
            data[name] = value
        return data


def _initial(scenario: Scenario) -> dict:
    initial = {
        "name": scenario.name,
        "description": scenario.description,
        "model_config": scenario.model_config_id,
        "preset": scenario.preset_id,
        "version": scenario.version,
    }
    for seed, field in scenarios.CONFIG_FIELDS.items():
        value = getattr(scenario, field)
        if seed not in CONFIG_BOXES:
            initial[seed] = value
            continue
        initial[seed] = "" if value is None else json.dumps(value, indent=2, ensure_ascii=False)
    return initial


def _save(form: ScenarioForm, request, scenario: Scenario | None) -> Scenario | None:
    data = dict(form.cleaned_data)
    version = data.pop("version")
    try:
        if scenario is None:
            return scenarios.create_scenario(request.tenant, **data)
        return scenarios.update_scenario(scenario, version=version or 0, **data)
    except ScenarioConfigInvalid as exc:
        box = exc.details["field"].split(".")[0]
        form.add_error(box if box in form.fields else None, exc.message)
    except ScenarioVersionConflict as exc:
        form.add_error(None, f"{exc.message} (your changes are still below)")
    except FieldErrors as exc:
        for field, problems in exc.by_field.items():
            for problem in problems:
                form.add_error(field if field in form.fields else None, problem)
    except Duplicate as exc:
        form.add_error("name", exc.message)
    return None


@console_view()
def scenario_list(request):
    rows = scoped(Scenario, request.tenant).select_related("model_config").order_by("name")
    return render(request, "roleplay/scenarios/list.html", {"rows": rows})


@console_view()
def scenario_create(request):
    form = ScenarioForm(posted(request), tenant=request.tenant)
    if request.method == "POST" and form.is_valid():
        scenario = _save(form, request, None)
        if scenario is not None:
            flash.success(request, f"Scenario “{scenario.name}” created.")
            return redirect("scenario_edit", pk=scenario.pk)
    status = 422 if request.method == "POST" else 200
    return render(
        request, "roleplay/scenarios/form.html", {"form": form, "scenario": None}, status=status
    )


@console_view()
def scenario_edit(request, pk):
    scenario = get_scoped_or_404(Scenario, request.tenant, pk=pk)
    if request.method == "POST":
        form = ScenarioForm(posted(request), tenant=request.tenant)
        if form.is_valid() and _save(form, request, scenario) is not None:
            flash.success(request, f"Scenario “{scenario.name}” saved.")
            return redirect("scenario_edit", pk=scenario.pk)
        status = 422
    else:
        form = ScenarioForm(initial=_initial(scenario), tenant=request.tenant)
        status = 200
    if not has_role(request.membership, Role.OPERATOR):
        for field in form.fields.values():
            field.disabled = True
    context = {"form": form, "scenario": scenario}
    return render(request, "roleplay/scenarios/form.html", context, status=status)


@console_view()
def scenario_delete(request, pk):
    scenario = get_scoped_or_404(Scenario, request.tenant, pk=pk)
    if request.method == "POST":
        scenarios.delete_scenario(scenario)
        flash.success(request, f"Scenario “{scenario.name}” deleted.")
        return redirect("scenarios")
    return _confirm(
        request,
        title=f"Delete scenario “{scenario.name}”?",
        message="Characters and conversations that use it run without a scenario.",
        cancel_url="/console/scenarios/",
    )
