"""Plans over the API, and a player's plan.

- ``/api/v1/plans/``: list, create (``Idempotency-Key``), retrieve, update, partial update
  and delete (409 ``plan_in_use`` while players or sign-up routes use it, unless
  ``?release=true``). A null limit is unlimited; ``model_configs`` empty: all;
  ``default_for`` the sign-up routes (``operator``, ``invite``, ``open``, or ``none`` for
  players without an account) whose default the plan is. Admin scope.
- ``GET /api/v1/players/{id}/plan``: the plan given to the player, the plan that applies
  and what they used; ``PUT`` gives a plan (``{"plan": id}``, null: the route's default
  again; admin scope).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console import audit
from console.models import Scope
from console.serializers import (
    RejectUnknownFields,
    StrictSerializer,
    TenantRelatedField,
    optional_reference,
    validated,
)
from console.viewsets import ServiceWrites
from roleplay.models import ModelConfig

from . import selectors, services
from .models import ROUTES, Plan, PlanAssignment, PlanDefault


def _limit(help_text: str):
    return serializers.IntegerField(
        min_value=0, max_value=services.MAX_LIMIT, allow_null=True, required=False,
        help_text=f"{help_text}; null: unlimited",
    )  # fmt: skip


class PlanSerializer(StrictSerializer):
    """A plan: what its players may spend and use."""

    messages_per_day = _limit("turns a player may start per UTC day")
    tokens_per_day = _limit("model tokens (input and output) per UTC day")
    tokens_per_month = _limit("model tokens per UTC month")
    max_reply_tokens = _limit("the most tokens a reply may ask of the model")
    max_context_tokens = _limit("the largest prompt window a turn may use")
    model_configs = TenantRelatedField(
        ModelConfig, many=True, required=False, pk_field=serializers.UUIDField(),
        help_text="The model configs a turn may use; empty: all.",
    )  # fmt: skip
    features = serializers.ListField(
        child=serializers.ChoiceField(choices=list(services.FEATURES)),
        required=False,
        max_length=len(services.FEATURES),
        help_text="What the plan allows beyond chat (images: pictures in replies).",
    )
    default_for = serializers.ListField(
        child=serializers.ChoiceField(choices=list(ROUTES)),
        required=False,
        max_length=len(ROUTES),
        help_text="The sign-up routes whose default plan this is (none: players without an "
        "account).",
    )

    class Meta:
        model = Plan
        fields = [
            "id", "name", "messages_per_day", "tokens_per_day", "tokens_per_month",
            "max_reply_tokens", "max_context_tokens", "model_configs", "features",
            "default_for", "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = ["id", "created_at", "updated_at"]
        extra_kwargs = {"name": {"max_length": services.MAX_NAME}}

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["default_for"] = sorted(
            PlanDefault.objects.filter(plan=instance).values_list("route", flat=True)
        )
        return data


class ReleaseQuerySerializer(RejectUnknownFields, serializers.Serializer):
    release = serializers.BooleanField(
        default=False, help_text="Delete even while players or routes use the plan."
    )

    def to_internal_value(self, data):
        return super().to_internal_value({key: data[key] for key in data})


class PlanViewSet(ServiceWrites):
    """Plans of the tenant's players (see the module docstring)."""

    model = Plan
    serializer_class = PlanSerializer
    required_scope = Scope.ADMIN
    ordering = ("name", "created_at")
    create_service = services.create_plan
    update_service = services.update_plan
    audited = True

    @extend_schema(parameters=[ReleaseQuerySerializer])
    def destroy(self, request, *args, **kwargs):
        """Delete; 409 ``plan_in_use`` while used, unless ``release``."""
        plan = self.get_object()
        query = validated(ReleaseQuerySerializer, request, request.query_params)
        services.delete_plan(
            plan, release=query["release"], by=audit.actor(request.user), request=request
        )
        return Response(status=204)


class PlanRefSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()


class MeterSerializer(serializers.Serializer):
    used = serializers.IntegerField()
    limit = serializers.IntegerField(allow_null=True)
    resets_at = serializers.DateTimeField()
    text = serializers.CharField()


class PlayerPlanSerializer(serializers.Serializer):
    """The player's plan: given (null: none), applying (null: unlimited), and usage."""

    plan = serializers.UUIDField(allow_null=True)
    applies = PlanRefSerializer(allow_null=True)
    messages_today = MeterSerializer()
    tokens_today = MeterSerializer()
    tokens_month = MeterSerializer()


class PlayerPlanBody(RejectUnknownFields, serializers.Serializer):
    plan = optional_reference(Plan)


def _player_plan(player) -> dict:
    summary = selectors.usage_summary(player)
    given = PlanAssignment.objects.filter(player=player).values_list("plan_id", flat=True).first()
    applies = summary.plan
    return {
        "plan": given,
        "applies": {"id": applies.pk, "name": applies.name} if applies else None,
        **{
            name: {"used": m.used, "limit": m.limit, "resets_at": m.resets_at, "text": m.text}
            for name, m in zip(
                ("messages_today", "tokens_today", "tokens_month"), summary.meters, strict=True
            )
        },
    }


class PlayerPlanActions:
    """``/players/{id}/plan``: composed into the players' viewset."""

    @extend_schema(methods=["GET"], responses=PlayerPlanSerializer)
    @extend_schema(methods=["PUT"], request=PlayerPlanBody, responses=PlayerPlanSerializer)
    @action(detail=True, methods=["get", "put"], url_path="plan", url_name="plan")
    def plan(self, request, pk=None):
        """The player's plan and usage; ``PUT`` gives a plan (null: the route's default)."""
        player = self.get_object()
        if request.method == "PUT":
            if not request.user.has_scope(Scope.ADMIN):
                raise exceptions.PermissionDenied("giving a plan needs the admin scope")
            body = validated(PlayerPlanBody, request)
            services.assign_plan(
                player, body["plan"], by=audit.actor(request.user), request=request
            )
        return Response(PlayerPlanSerializer(_player_plan(player)).data)
