"""Console pages of presets: the list, a new preset, an import, the editor, delete, export.

Thin views, as the other console pages: forms read the input, ``roleplay.presets.services``
writes, ``roleplay.presets.selectors`` reads, :func:`console.access.console_view` decides
who may (viewers read, operators edit). The editor's moves, additions and removals work
without JavaScript: each button is a submit that re-renders the page with every edit kept
and nothing saved; ``static/js/presets.js`` does the same moves in the page (drag and drop
too). Save sends the version the page showed: when someone saved meanwhile, the page comes
back with the edits intact, says so, and offers to save over the newer version.
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.http import HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods

from console.access import console_view, posted
from console.body_limit import RUNTIME_MAX_BODY_BYTES
from console.failures import DomainError
from console.models import Role
from console.scoping import get_scoped_or_404
from roleplay.errors import Duplicate, FieldErrors
from roleplay.models import Preset
from roleplay.presets import selectors
from roleplay.presets import services as presets
from roleplay.presets.forms import DEFAULT_SOURCE, EditorRows, ImportPresetForm, NewPresetForm
from roleplay.presets.services import PresetVersionConflict
from roleplay.prompting.default_preset import (
    DEFAULT_PRESET_NAME,
    default_preset,
    default_prompt_data,
)
from roleplay.prompting.preset_files import decode_json
from roleplay.prompting.presets import (
    ROLES,
    LoadedPreset,
    PresetInvalid,
    dump_prompts,
    validate_prompts,
)
from roleplay.prompting.sillytavern import PresetFileInvalid
from roleplay.selectors import conversation_list
from roleplay.turns.preview import SAMPLE_INPUT, preview_prompt

POSITION_LABELS = [
    ("relative", "in the list"),
    ("at_depth", "in the chat, at a depth"),
    ("none", "not sent (role template)"),
]


PREVIEW_CONVERSATIONS = 50
MAX_PREVIEW_INPUT = 4000


def _report_key(pk) -> str:
    return f"preset-import-report-{pk}"


def _form_errors(form, exc: Exception) -> None:
    """A service's field errors or duplicate, next to the form's fields."""
    if isinstance(exc, FieldErrors):
        for name, messages in exc.by_field.items():
            for message in messages:
                form.add_error(name if name in form.fields else None, message)
    elif isinstance(exc, Duplicate):
        name = exc.details.get("field")
        form.add_error(name if name in form.fields else None, exc.message)


@console_view()
def preset_list(request):
    return render(
        request,
        "roleplay/presets/list.html",
        {"presets": selectors.preset_list(request.tenant), "default_name": DEFAULT_PRESET_NAME},
    )


@console_view(read=Role.OPERATOR)
def preset_create(request):
    form = NewPresetForm(posted(request), tenant=request.tenant)
    if request.method == "GET" and request.GET.get("from"):
        form.initial["start_from"] = request.GET["from"]
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if data["start_from"] == DEFAULT_SOURCE:
            prompts = default_prompt_data()
        else:
            prompts = get_scoped_or_404(Preset, request.tenant, pk=data["start_from"]).prompts
        try:
            preset = presets.create_preset(
                request.tenant, name=data["name"], description=data["description"], prompts=prompts
            )
        except (FieldErrors, Duplicate) as exc:
            _form_errors(form, exc)
        else:
            flash.success(request, f"Preset “{preset.name}” created.")
            return redirect("preset_edit", pk=preset.pk)
    return render(request, "roleplay/presets/new.html", {"form": form})


@console_view(read=Role.OPERATOR)
def preset_import(request):
    form = ImportPresetForm(posted(request), request.FILES or None)
    problems = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            if upload.size > RUNTIME_MAX_BODY_BYTES:
                raise PresetFileInvalid(message=f"larger than {RUNTIME_MAX_BODY_BYTES} bytes")
            data = decode_json(upload.read(RUNTIME_MAX_BODY_BYTES + 1))
            preset, report = presets.import_preset(
                request.tenant, data, name=form.cleaned_data["name"] or None, filename=upload.name
            )
        except PresetFileInvalid as exc:
            form.add_error("file", exc.message)
        except PresetInvalid as exc:
            problems = [f"{p.loc}: {p.msg}" for p in exc.problems]
        except (FieldErrors, Duplicate) as exc:
            _form_errors(form, exc)
        else:
            request.session[_report_key(preset.pk)] = report
            flash.success(request, f"Preset “{preset.name}” imported.")
            return redirect("preset_edit", pk=preset.pk)
    return render(request, "roleplay/presets/import.html", {"form": form, "problems": problems})


def _editor(request, context: dict):
    context.setdefault("rows", context["editor"].rows)
    context.update(roles=ROLES, positions=POSITION_LABELS)
    context.setdefault("named_status", context["editor"].named_status())
    context["preview_conversations"] = conversation_list(request.tenant)[:PREVIEW_CONVERSATIONS]
    return render(request, "roleplay/presets/editor.html", context)


@console_view()
def preset_default(request):
    """The shipped default preset, read only; "copy" starts a new preset from it."""
    editor = EditorRows.from_prompts(dump_prompts(default_preset().prompts))
    return _editor(
        request,
        {"editor": editor, "preset": None, "name": DEFAULT_PRESET_NAME, "can_edit": False},
    )


@console_view()
def preset_edit(request, pk):
    preset = get_scoped_or_404(Preset, request.tenant, pk=pk)
    can_edit = request.membership.can_edit()
    context = {"preset": preset, "can_edit": can_edit, "version": preset.version}
    context["name"], context["description"] = preset.name, preset.description
    context["reasoning_in_prompt"] = preset.reasoning_in_prompt
    if request.method == "GET":
        context["editor"] = EditorRows.from_prompts(preset.prompts)
        context["report"] = request.session.pop(_report_key(pk), None)
        context["export_notes"] = selectors.export_preset(preset, "sillytavern")[1]
        return _editor(request, context)
    editor = EditorRows.from_post(request.POST)
    action = request.POST.get("action", "save")
    context.update(
        editor=editor,
        name=request.POST.get("name", "").strip(),
        description=request.POST.get("description", "").replace("\r\n", "\n"),
        reasoning_in_prompt=request.POST.get("reasoning_in_prompt") == "on",
        version=_version(request.POST.get("version")),
    )
    if action not in ("save", "overwrite"):
        editor.apply(action)
        context["unsaved"] = True
        return _editor(request, context)
    if action == "overwrite":
        context["version"] = _version(request.POST.get("current_version"))
    try:
        presets.update_preset(
            preset,
            version=context["version"],
            name=context["name"],
            description=context["description"],
            prompts=editor.prompts(),
            reasoning_in_prompt=context["reasoning_in_prompt"],
        )
    except PresetInvalid as exc:
        editor.attach(exc.problems)
    except PresetVersionConflict as exc:
        context["conflict"] = exc.details["current_version"]
    except FieldErrors as exc:
        context["field_errors"] = exc.by_field
    except Duplicate as exc:
        context["field_errors"] = {"name": [exc.message]}
    else:
        flash.success(request, f"Preset “{preset.name}” saved (version {preset.version}).")
        return redirect("preset_edit", pk=preset.pk)
    context["unsaved"] = True
    return _editor(request, context)


def _version(raw) -> int:
    """The version a page was rendered from; anything else can only conflict."""
    return int(raw) if raw and str(raw).isdigit() and len(str(raw)) < 10 else 0


@console_view(write=Role.VIEWER)
@require_http_methods(["GET", "POST"])
def preset_preview(request, pk=None):
    """The editor's live preview: the messages the chosen conversation's next turn would send
    with the prompts as the page shows them (unsaved edits included; a viewer, whose page
    sends no prompts, previews the saved ones), each with its tokens. Writes nothing."""
    row = get_scoped_or_404(Preset, request.tenant, pk=pk) if pk else None
    data = request.POST if request.method == "POST" else request.GET
    conversations = list(conversation_list(request.tenant)[:PREVIEW_CONVERSATIONS])
    chosen = str(data.get("preview_conversation", ""))
    conversation = next((c for c in conversations if str(c.pk) == chosen), None)
    if conversation is None and conversations:
        conversation = conversations[0]
    sample = str(data.get("preview_input", ""))[:MAX_PREVIEW_INPUT]
    context = {
        "conversations": conversations,
        "conversation": conversation,
        "sample": sample,
        "sample_placeholder": SAMPLE_INPUT,
    }
    try:
        preset = _previewed_preset(request, row)
        if conversation is not None:
            context["preview"] = preview_prompt(conversation, preset, sample)
    except PresetInvalid as exc:
        context["problems"] = [f"{p.loc}: {p.msg}" for p in exc.problems]
    except DomainError as exc:
        context["error"] = {"code": exc.code, "message": exc.message}
    return render(request, "roleplay/presets/_preview.html", context)


def _previewed_preset(request, row: Preset | None) -> LoadedPreset:
    editor = EditorRows.from_post(request.POST) if request.method == "POST" else None
    if editor is None or not editor.rows or not request.membership.can_edit():
        return selectors.load_preset(row) if row else default_preset()
    name = row.name if row else DEFAULT_PRESET_NAME
    prompts = tuple(validate_prompts(editor.prompts()))
    on = bool(row and row.reasoning_in_prompt)
    return LoadedPreset(prompts, name=name, id=str(row.pk) if row else None, reasoning_in_prompt=on)


@console_view(read=Role.OPERATOR)
def preset_delete(request, pk):
    preset = get_scoped_or_404(Preset, request.tenant, pk=pk)
    if request.method == "POST":
        moved = presets.delete_preset(preset, detach=True)
        note = f" {moved} model config(s) now use the shipped default." if moved else ""
        flash.success(request, f"Preset “{preset.name}” deleted.{note}")
        return redirect("presets")
    users = selectors.preset_users(preset)
    warning = ""
    if users:
        names = ", ".join(c.name for c in users)
        warning = f"These model configs use it and will use the shipped default instead: {names}."
    return render(
        request,
        "console/confirm.html",
        {
            "title": f"Delete preset “{preset.name}”?",
            "message": "The preset is deleted for good.",
            "warning": warning,
            "cancel_url": f"/console/presets/{preset.pk}/",
        },
    )


@console_view()
@require_GET
def preset_export(request, pk):
    preset = get_scoped_or_404(Preset, request.tenant, pk=pk)
    fmt = request.GET.get("format", "native")
    if fmt not in selectors.EXPORT_FORMATS:
        return HttpResponseBadRequest("format is native or sillytavern")
    data, _notes = selectors.export_preset(preset, fmt)
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False, "indent": 2})
    response["Content-Disposition"] = content_disposition_header(True, f"{preset.name}.json")
    return response
