"""Forms of moderation: the console's policy and case actions, the player's report."""

from __future__ import annotations

from django import forms

from console.storable import loads as loads_json
from roleplay.models import ModelConfig

from .services import ACTIONS, MAX_HOURS, MAX_REASON


class PolicyForm(forms.Form):
    enabled = forms.BooleanField(required=False)
    check_input = forms.BooleanField(required=False)
    check_reply = forms.BooleanField(required=False)
    show_nsfw = forms.BooleanField(required=False)
    model_config = forms.ModelChoiceField(
        queryset=ModelConfig.objects.none(), required=False,
        help_text="an OpenAI-compatible endpoint that answers /moderations",
    )  # fmt: skip
    rules = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false"}), required=False,
        max_length=200_000,
        help_text='JSON: {"categories": {"name": {"action": "block_input", "keywords": [...], '
        '"patterns": [...]}}, "endpoint_action": "warn"}',
    )  # fmt: skip

    def __init__(self, *args, tenant=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model_config"].queryset = ModelConfig.objects.filter(tenant=tenant)

    def clean_rules(self):
        text = self.cleaned_data.get("rules") or ""
        if not text.strip():
            return {}
        try:
            value = loads_json(text, "rules")
        except ValueError as exc:
            raise forms.ValidationError(f"not JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise forms.ValidationError("the rules are a JSON object")
        return value


class ActForm(forms.Form):
    action = forms.ChoiceField(choices=[(a, a.replace("_", " ")) for a in ACTIONS])
    reason = forms.CharField(max_length=MAX_REASON, required=False)
    hours = forms.IntegerField(min_value=1, max_value=MAX_HOURS, required=False)


class ReportForm(forms.Form):
    message_id = forms.UUIDField(required=False)
    character_id = forms.UUIDField(required=False)
    reason = forms.CharField(max_length=MAX_REASON)

    def clean(self):
        data = super().clean()
        if bool(data.get("message_id")) == bool(data.get("character_id")):
            raise forms.ValidationError("report one message or one character")
        return data
