"""Console forms of the tenancy app: API tokens."""

from __future__ import annotations

from django import forms

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
