"""The console form of an image config. It only reads the page's fields into Python values;
the rules are the services' (``images.engine.config``), whose coded errors are shown beside
the field they name."""

from __future__ import annotations

from django import forms

from images.models import ImageConfig, ImageProvider, ModerationMode


class ImageConfigForm(forms.Form):
    name = forms.CharField(max_length=100)
    provider = forms.ChoiceField(choices=ImageProvider.choices)
    base_url = forms.CharField(
        max_length=500,
        help_text="OpenAI-compatible: the API root, e.g. https://api.example/v1. "
        "Automatic1111/Forge: the server, e.g. http://127.0.0.1:7860.",
    )
    api_key_env = forms.CharField(
        max_length=100, required=False, label="API key variable",
        help_text="The NAME of the environment variable that holds the key, never the key.",
    )  # fmt: skip
    model = forms.CharField(max_length=200, required=False,
                            help_text="Automatic1111: a checkpoint name (optional).")  # fmt: skip
    default_width = forms.IntegerField(min_value=64, max_value=8192, initial=1024)
    default_height = forms.IntegerField(min_value=64, max_value=8192, initial=1024)
    default_count = forms.IntegerField(min_value=1, max_value=8, initial=1)
    moderation_mode = forms.ChoiceField(choices=ModerationMode.choices, initial="backend")
    moderation_base_url = forms.CharField(
        max_length=500, required=False,
        help_text="Where POST /moderations goes (blank: the base URL).",
    )  # fmt: skip
    moderation_model = forms.CharField(max_length=200, required=False)
    allowed_classifications = forms.CharField(
        max_length=2000, initial="SFW",
        help_text="Comma-separated classes an image may have to be shown (default SFW).",
    )  # fmt: skip
    timeout_seconds = forms.IntegerField(min_value=1, max_value=600, initial=120)
    slot_deadline_seconds = forms.IntegerField(
        min_value=10, max_value=86_400, initial=600,
        help_text="A chat picture still drawing after this long is marked failed (timed_out).",
    )  # fmt: skip

    def __init__(self, data=None, *, instance: ImageConfig | None = None) -> None:
        initial = None
        if instance is not None:
            initial = {name: getattr(instance, name) for name in self.base_fields}
            initial["allowed_classifications"] = ", ".join(instance.allowed_classifications)
        super().__init__(data, initial=initial)

    def clean_allowed_classifications(self) -> list[str]:
        text = self.cleaned_data["allowed_classifications"]
        return [part.strip() for part in text.split(",") if part.strip()]

    def values(self) -> dict:
        values = dict(self.cleaned_data)
        for name in ("model", "api_key_env", "moderation_base_url", "moderation_model"):
            values[name] = values.get(name) or ""
        return values
