"""Console pages of instruct templates: the built-ins and the tenant's imported ones on one
page, with the import form (a SillyTavern file or a model's ``tokenizer_config.json``
uploaded, or its JSON pasted), and delete."""

from __future__ import annotations

from django import forms
from django.contrib import messages as flash
from django.shortcuts import redirect, render

from console.access import console_view, posted
from console.body_limit import RUNTIME_MAX_BODY_BYTES
from console.models import Role
from console.scoping import get_scoped_or_404, scoped
from console.storable import loads as loads_json

from . import services
from .configs import OWN_TEMPLATE
from .engine import BUILTIN_TEMPLATES
from .errors import TemplateRefused
from .models import InstructTemplate

LIST_URL = "/console/models/templates/"


class ImportTemplateForm(forms.Form):
    file = forms.FileField(
        required=False,
        help_text="A SillyTavern instruct or context template (.json), a master export, or a "
        "model's tokenizer_config.json (its Jinja chat_template).",
        widget=forms.ClearableFileInput(attrs={"accept": "application/json,.json"}),
    )
    text = forms.CharField(
        required=False,
        label="Or paste its JSON",
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
    )
    name = forms.CharField(
        max_length=100, required=False, help_text="Leave empty to use the file's own name."
    )

    def parsed(self) -> object:
        """The file's (else the pasted) JSON; a form error when there is none or it is not
        JSON."""
        upload = self.cleaned_data.get("file")
        if upload is not None:
            if upload.size > RUNTIME_MAX_BODY_BYTES:
                raise forms.ValidationError(f"Larger than {RUNTIME_MAX_BODY_BYTES} bytes.")
            raw = upload.read(RUNTIME_MAX_BODY_BYTES + 1)
        else:
            raw = (self.cleaned_data.get("text") or "").encode()
        if not raw.strip():
            raise forms.ValidationError("Choose a file or paste its JSON.")
        try:
            return loads_json(raw, "template")
        except (ValueError, UnicodeDecodeError) as exc:
            raise forms.ValidationError(f"Not JSON: {exc}") from exc


@console_view(write=Role.ADMIN)
def template_list(request):
    form = ImportTemplateForm(posted(request), request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            template = services.import_template(
                request.tenant, file=form.parsed(), name=form.cleaned_data["name"]
            )
        except forms.ValidationError as exc:
            form.add_error("file", exc)
        except TemplateRefused as exc:
            field = exc.details.get("field", "")
            said = f"{exc.code}: {exc.message}" + (f" ({field})" if field else "")
            form.add_error("name" if field == "name" else "file", said)
        else:
            flash.success(request, f"Instruct template “{template.name}” imported.")
            return redirect(LIST_URL)
    context = {
        "form": form,
        "builtins": [(key, t.name) for key, t in BUILTIN_TEMPLATES.items()]
        + [(OWN_TEMPLATE, "The bundled model's own chat template, read from its GGUF file")],
        "templates": scoped(InstructTemplate, request.tenant).order_by("name"),
    }
    status = 422 if request.method == "POST" else 200
    return render(request, "roleplay/instruct_templates/list.html", context, status=status)


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def template_delete(request, pk):
    template = get_scoped_or_404(InstructTemplate, request.tenant, pk=pk)
    if request.method == "POST":
        services.delete_template(template)
        flash.success(request, f"Instruct template “{template.name}” deleted.")
        return redirect(LIST_URL)
    return render(request, "console/confirm.html", {
        "title": f"Delete instruct template “{template.name}”?",
        "message": "Model configs that name it keep rendering with the copy they hold.",
        "cancel_url": LIST_URL,
    })  # fmt: skip
