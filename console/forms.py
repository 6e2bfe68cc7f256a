"""Console forms of the tenancy app: API tokens; the JSON box every console form uses."""

from __future__ import annotations

import json

from django import forms
from django.forms.fields import InvalidJSONInput, JSONString

from console import storable
from console.models import Scope


class ApiTokenForm(forms.Form):
    """Name and scopes of a new token; the token value itself is generated, never typed."""

    name = forms.CharField(max_length=100, strip=True)
    scopes = forms.MultipleChoiceField(
        choices=Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        help_text="admin implies every scope; content edits characters and worldbooks; "
        "play runs conversations.",
    )


class StoredJSONField(forms.JSONField):
    """Django's JSON field, read by :func:`console.storable.loads`: JSON nested past the
    interpreter's limit, ``NaN``, a number past 64 bits or a NUL or lone-surrogate escape
    is a form error, not a server error (``json.loads`` raised ``RecursionError``, and
    the value then failed in the database or in the page that showed it again)."""

    def to_python(self, value):
        if self.disabled or not isinstance(value, str) or value in self.empty_values:
            return super().to_python(value)
        try:
            converted = storable.loads(value, self.label or "JSON")
        except json.JSONDecodeError:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid") from None
        except ValueError as exc:
            raise forms.ValidationError(f"Not JSON this field can keep: {exc}.") from None
        return JSONString(converted) if isinstance(converted, str) else converted

    def bound_data(self, data, initial):
        if self.disabled or data is None:
            return super().bound_data(data, initial)
        try:
            return storable.loads(data)
        except ValueError:
            return InvalidJSONInput(data)  # shown again as typed
