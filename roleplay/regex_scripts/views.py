"""Console pages of regex scripts: the tenant's global and preset scripts on one page, a
character's on its page (with the switch that lets them run), and one editor for all."""

from __future__ import annotations

import uuid

from django.contrib import messages as flash
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view, files, posted
from console.scoping import LOOKUP_MISSES, get_scoped_or_404, scoped
from roleplay.models import Character, Preset

from . import selectors, services
from .errors import RegexScopeInvalid, RegexScriptRefused
from .forms import RegexFileForm, RegexScriptForm
from .models import RegexScript, ScriptScope

LIST_URL = "/console/regex-scripts/"


@console_view()
def script_list(request):
    tenant = request.tenant
    presets = [
        (preset, list(selectors.owned(tenant, scope=ScriptScope.PRESET, preset=preset)))
        for preset in scoped(Preset, tenant).order_by("name")
    ]
    with_scripts = RegexScript.objects.filter(tenant=tenant, scope=ScriptScope.CHARACTER)
    characters = scoped(Character, tenant).filter(
        pk__in=with_scripts.values("character_id")
    ).order_by("name").only("id", "name", "allow_regex")  # fmt: skip
    context = {
        "global_scripts": selectors.owned(tenant, scope=ScriptScope.GLOBAL),
        "presets": presets,
        "characters": characters,
    }
    return render(request, "roleplay/regex_scripts/list.html", context)


@console_view()
def script_create(request):
    scope = request.GET.get("scope", ScriptScope.GLOBAL)
    owner = _owner(request, scope, request.GET.get("owner", ""))
    form = RegexScriptForm(posted(request))
    if request.method == "POST" and form.is_valid():
        row = _save(form, services.create_script, request.tenant, scope=scope, **owner)
        if row is not None:
            flash.success(request, f"Regex script “{row.name}” created.")
            return redirect(_back(row))
    back = _back_of(scope, owner)
    return _page(request, form, None, back)


@console_view()
def script_import(request):
    """A regex file's scripts added to the owner ``scope``/``owner`` name: what could not
    run (or passed the owner's limit) is listed in the message, the rest is imported."""
    scope = request.GET.get("scope", ScriptScope.GLOBAL)
    owner = _owner(request, scope, request.GET.get("owner", ""))
    back = _back_of(scope, owner)
    form = RegexFileForm(posted(request), files(request))
    if request.method == "POST" and form.is_valid():
        try:
            result = services.import_file(
                request.tenant, form.cleaned_data["file"], scope=scope, **owner
            )
        except RegexScriptRefused as exc:
            form.add_error("file", f"{exc.message} ({exc.code})")
        else:
            _say_imported(request, result)
            return redirect(back)
    context = {"form": form, "back": back, "scope": scope, **owner}
    return render(request, "roleplay/regex_scripts/import.html", context)


def _say_imported(request, result: dict) -> None:
    imported, refused = len(result["imported"]), result["refused"]
    flash.success(request, f"{imported} regex script{'s' if imported != 1 else ''} imported.")
    for problem in refused:
        name = problem["script"] or f"script {problem['index'] + 1}"
        flash.warning(request, f"Not imported: “{name}”: {problem['message']} ({problem['code']})")


@console_view()
def script_edit(request, pk):
    row = get_scoped_or_404(RegexScript, request.tenant, pk=pk)
    form = RegexScriptForm(posted(request), initial=RegexScriptForm.initial_of(row))
    if request.method == "POST" and form.is_valid():
        script_id = str(row.script.get("id") or "")
        if _save(form, services.update_script, row, script_id=script_id) is not None:
            flash.success(request, f"Regex script “{row.name}” saved.")
            return redirect(_back(row))
    if not request.membership.can_edit():
        for field in form.fields.values():
            field.disabled = True
    return _page(request, form, row, _back(row))


@console_view()
def script_delete(request, pk):
    row = get_scoped_or_404(RegexScript, request.tenant, pk=pk)
    if request.method == "POST":
        services.delete_script(row)
        flash.success(request, f"Regex script “{row.name}” deleted.")
        return redirect(_back(row))
    return render(request, "console/confirm.html", {
        "title": f"Delete regex script “{row.name}”?",
        "message": "The script stops running at once.", "warning": "", "cancel_url": _back(row),
    })  # fmt: skip


@console_view()
@require_POST
def character_allow(request, pk):
    """Allow or stop a character's regex scripts (``allow`` = "1" or "0")."""
    character = get_scoped_or_404(Character, request.tenant, pk=pk)
    allow = request.POST.get("allow") == "1"
    services.set_allowed(character, allow)
    state = "run" if allow else "no longer run"
    flash.success(request, f"The regex scripts of “{character.name}” {state}.")
    return redirect("character_edit", pk=character.pk)


def character_section(character: Character) -> dict:
    """What the character page's "Regex scripts" section shows."""
    return {
        "regex_scripts": selectors.owned(
            character.tenant, scope=ScriptScope.CHARACTER, character=character
        )
    }


def _page(request, form, row, back: str):
    context = {"form": form, "row": row, "back": back}
    return render(request, "roleplay/regex_scripts/form.html", context)


def _save(form, service, *args, script_id: str = "", **fields):
    """Call the service with the form's script; a refused script is shown on its field."""
    try:
        return service(*args, script=form.script(script_id),
                       position=form.cleaned_data.get("position"), **fields)  # fmt: skip
    except RegexScriptRefused as exc:
        field = exc.details.get("field")
        form.add_error(field if field in form.fields else None, exc.message)
    except RegexScopeInvalid as exc:
        form.add_error(None, exc.message)
    return None


def _owner(request, scope: str, owner_id: str) -> dict:
    if scope == ScriptScope.GLOBAL:
        return {}
    model = {ScriptScope.CHARACTER: Character, ScriptScope.PRESET: Preset}.get(scope)
    if model is None:
        raise Http404("no such scope")
    try:
        uuid.UUID(owner_id)
    except (ValueError, TypeError) as exc:
        raise Http404("no such owner") from exc
    try:
        return {scope: scoped(model, request.tenant).get(pk=owner_id)}
    except LOOKUP_MISSES as exc:
        raise Http404("no such owner") from exc


def _back_of(scope: str, owner: dict) -> str:
    if scope == ScriptScope.CHARACTER:
        return f"/console/characters/{owner['character'].pk}/"
    return LIST_URL


def _back(row: RegexScript) -> str:
    if row.scope == ScriptScope.CHARACTER:
        return f"/console/characters/{row.character_id}/"
    return LIST_URL
