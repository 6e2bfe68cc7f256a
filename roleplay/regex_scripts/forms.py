"""The console's script editor: SillyTavern's fields as form fields; the script it builds is
checked by the services (the engine), like every other door's."""

from __future__ import annotations

from typing import Any

from django import forms

from console import storable

from .engine.spec import MAX_FIND_CHARS, MAX_NAME_CHARS, MAX_REPLACE_CHARS

PLACEMENT_CHOICES = [
    ("1", "User input"),
    ("2", "AI output"),
    ("3", "Slash command"),
    ("5", "World info"),
    ("6", "Reasoning"),
]
SUBSTITUTE_CHOICES = [
    ("0", "Don't substitute"),
    ("1", "Raw macro values"),
    ("2", "Escaped macro values"),
]
FLAGS = ("disabled", "markdownOnly", "promptOnly", "runOnEdit")


class RegexScriptForm(forms.Form):
    scriptName = forms.CharField(label="Name", max_length=MAX_NAME_CHARS)
    findRegex = forms.CharField(
        label="Find regex", max_length=MAX_FIND_CHARS,
        help_text="/pattern/flags (flags g i m s u y), or a bare pattern",
    )  # fmt: skip
    replaceString = forms.CharField(
        label="Replace with", required=False, max_length=MAX_REPLACE_CHARS,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="$1, $<name>, $& or {{match}}, $$; {{char}} and {{user}} are filled",
    )  # fmt: skip
    trimStrings = forms.CharField(
        label="Trim out", required=False, widget=forms.Textarea(attrs={"rows": 2}),
        help_text="one per line: removed from each match before it is inserted",
    )  # fmt: skip
    placement = forms.MultipleChoiceField(
        choices=PLACEMENT_CHOICES, widget=forms.CheckboxSelectMultiple, required=False
    )
    disabled = forms.BooleanField(required=False)
    markdownOnly = forms.BooleanField(
        label="Display only", required=False, help_text="changes only what the chat shows"
    )
    promptOnly = forms.BooleanField(
        label="Prompt only", required=False, help_text="changes only what the model is sent"
    )
    runOnEdit = forms.BooleanField(label="Run on edit", required=False)
    substituteRegex = forms.TypedChoiceField(
        label="Macros in find regex", choices=SUBSTITUTE_CHOICES, coerce=int, initial="0"
    )
    minDepth = forms.IntegerField(label="Min depth", required=False, min_value=-1)
    maxDepth = forms.IntegerField(label="Max depth", required=False, min_value=-1)
    position = forms.IntegerField(required=False, min_value=0, max_value=1_000_000)

    @classmethod
    def initial_of(cls, row) -> dict[str, Any]:
        script = dict(row.script)
        initial = {key: script.get(key) for key in cls.base_fields if key in script}
        initial["trimStrings"] = "\n".join(script.get("trimStrings") or [])
        initial["placement"] = [str(p) for p in script.get("placement") or []]
        initial["substituteRegex"] = str(script.get("substituteRegex") or 0)
        initial["position"] = row.position
        return initial

    def script(self, script_id: str = "") -> dict[str, Any]:
        """The script in SillyTavern's shape, from the cleaned data."""
        data = self.cleaned_data
        return {
            "id": script_id,
            "scriptName": data["scriptName"],
            "findRegex": data["findRegex"],
            "replaceString": data.get("replaceString") or "",
            "trimStrings": [line for line in (data.get("trimStrings") or "").splitlines() if line],
            "placement": [int(p) for p in data.get("placement") or []],
            **{flag: bool(data.get(flag)) for flag in FLAGS},
            "substituteRegex": data.get("substituteRegex") or 0,
            "minDepth": data.get("minDepth"),
            "maxDepth": data.get("maxDepth"),
        }


MAX_FILE_BYTES = 1 << 20  # a regex file: one script or a bulk export of a few hundred


class RegexFileForm(forms.Form):
    """A regex file as SillyTavern exports one script or several: its JSON, read here."""

    file = forms.FileField(
        label="Regex file",
        widget=forms.ClearableFileInput(attrs={"accept": ".json"}),
        help_text="SillyTavern's export of one script, or of a list of scripts (bulk export), "
        "at most 1 MiB. They are added after the scripts already here, in the file's order.",
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        raw = upload.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise forms.ValidationError("The file is larger than 1 MiB.")
        try:
            return storable.loads(raw.decode("utf-8-sig"), "file")
        except ValueError as exc:  # UnicodeDecodeError included
            raise forms.ValidationError(f"The file is not JSON this page can keep: {exc}") from exc
