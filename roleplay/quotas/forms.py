"""Forms of the console's plans page: a plan, and giving one to a player."""

from __future__ import annotations

from django import forms

from console.models import Player
from roleplay.models import ModelConfig

from . import services
from .models import ROUTES, Plan

ROUTE_LABELS = {
    "operator": "players an operator made",
    "invite": "players who came by invite",
    "open": "players who signed up",
    "none": "players without an account (an integrator's)",
}


def _limit(label: str) -> forms.IntegerField:
    return forms.IntegerField(
        label=label, required=False, min_value=0, max_value=services.MAX_LIMIT,
        help_text="empty: unlimited",
    )  # fmt: skip


class PlanForm(forms.Form):
    name = forms.CharField(max_length=services.MAX_NAME)
    messages_per_day = _limit("Messages per day")
    tokens_per_day = _limit("Tokens per day")
    tokens_per_month = _limit("Tokens per month")
    max_reply_tokens = _limit("Max reply tokens")
    max_context_tokens = _limit("Max context tokens")
    model_configs = forms.ModelMultipleChoiceField(
        queryset=ModelConfig.objects.none(), required=False,
        widget=forms.CheckboxSelectMultiple, help_text="none checked: all",
    )  # fmt: skip
    features = forms.MultipleChoiceField(
        choices=[(f, f) for f in services.FEATURES], required=False,
        widget=forms.CheckboxSelectMultiple,
    )  # fmt: skip
    default_for = forms.MultipleChoiceField(
        choices=[(r, ROUTE_LABELS[r]) for r in ROUTES], required=False,
        widget=forms.CheckboxSelectMultiple, label="Default plan of",
    )  # fmt: skip

    def __init__(self, *args, tenant, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model_configs"].queryset = ModelConfig.objects.filter(tenant=tenant).order_by(
            "name"
        )

    def values(self) -> dict:
        """The cleaned fields as the plan services take them."""
        data = dict(self.cleaned_data)
        data["model_configs"] = list(data["model_configs"])
        return data


def initial_of(plan: Plan, routes: list[str]) -> dict:
    """A plan's fields as the form shows them."""
    fields = ("name", *services.LIMITS, "features")
    return {
        **{name: getattr(plan, name) for name in fields},
        "model_configs": list(plan.model_configs.all()),
        "default_for": routes,
    }


class AssignForm(forms.Form):
    player = forms.ModelChoiceField(queryset=Player.objects.none())
    plan = forms.ModelChoiceField(
        queryset=Plan.objects.none(), required=False, empty_label="(their route's default)"
    )

    def __init__(self, *args, tenant, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["player"].queryset = Player.objects.filter(tenant=tenant).order_by(
            "external_id"
        )
        self.fields["plan"].queryset = Plan.objects.filter(tenant=tenant).order_by("name")
