"""Console form fields for the card's list fields: alternate greetings and tags.

A greeting is prose of its own (lines, quotes, commas), so each one gets a text area: the
widget renders one per greeting plus an empty one to add the next, and ``characters.js``
adds more on request. Tags are short words, typed as one comma-separated line. Either way
the form hands the services a plain list of strings, and the limits are the services'.
"""

from __future__ import annotations

from django import forms
from django.utils.html import format_html, format_html_join


class TextListWidget(forms.Widget):
    """One ``<textarea name=...>`` per item and a blank one; submitted as a repeated field."""

    def __init__(self, attrs=None, *, add_label: str = "Add another"):
        super().__init__(attrs)
        self.add_label = add_label

    def value_from_datadict(self, data, files, name):
        getlist = getattr(data, "getlist", None)
        return getlist(name) if getlist else data.get(name)

    def value_omitted_from_data(self, data, files, name):
        return name not in data

    def render(self, name, value, attrs=None, renderer=None):
        items = [item for item in (value or []) if isinstance(item, str)] + [""]
        base_id = (attrs or {}).get("id") or f"id_{name}"
        disabled = " disabled" if (attrs or {}).get("disabled") else ""
        rows = format_html_join(
            "",
            '<li><textarea name="{}" id="{}_{}" rows="3"{}>{}</textarea></li>',
            ((name, base_id, i, disabled, item) for i, item in enumerate(items)),
        )
        button = (
            ""
            if disabled
            else format_html(
                '<button type="button" class="secondary small" data-list-add>{}</button>',
                self.add_label,
            )
        )
        return format_html(
            '<div class="text-list" id="{}" data-text-list>'
            '<ol class="text-list-items">{}</ol>{}</div>',
            base_id,
            rows,
            button,
        )


class TextListField(forms.Field):
    """A list of texts from :class:`TextListWidget`; blank entries are left out."""

    widget = TextListWidget

    def to_python(self, value):
        if value in (None, ""):
            return []
        if isinstance(value, str):
            value = [value]
        return [item.replace("\r\n", "\n") for item in value if item and item.strip()]

    def prepare_value(self, value):
        return value if isinstance(value, list) else []


class TagsField(forms.CharField):
    """Tags typed as ``a, b, c``: trimmed, blanks and repeats left out."""

    def prepare_value(self, value):
        if isinstance(value, list):
            return ", ".join(value)
        return value

    def to_python(self, value):
        if isinstance(value, list):
            return value
        text = super().to_python(value)
        tags: list[str] = []
        for tag in (part.strip() for part in (text or "").split(",")):
            if tag and tag not in tags:
                tags.append(tag)
        return tags
