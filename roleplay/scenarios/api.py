"""``/api/v1/scenarios/``: how a character's conversations run (Agent V2, Story, Compact),
with the config objects named as the seed names them (``agenticV2``, ``storyV1``,
``compact``, ``preActorDirector``). Writes go through ``roleplay.scenarios.services``; an
update sends the ``version`` it edited (a stale one is a 409 ``revision_conflict``)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.models import Scope
from console.serializers import StrictSerializer, TenantRelatedField, Versioned
from console.viewsets import ServiceWrites
from images.models import ImageConfig
from roleplay.models import ModelConfig, Preset, Scenario
from roleplay.scenarios import services as scenarios


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": True,
        "nullable": True,
        "description": "A config object with the seed's field names (docs/agentic.md); "
        "unknown fields are refused. Null: off.",
    }
)
class ConfigObjectField(serializers.JSONField):
    """Any JSON: ``roleplay.scenarios.config`` answers a bad one naming the field (422)."""


class ScenarioSerializer(Versioned, StrictSerializer):
    """A scenario: the Actor's model config and preset, the four config objects by the
    seed's names, and the ``version`` compare-and-set works on."""

    model_config = TenantRelatedField(ModelConfig, allow_null=True, required=False)
    preset = TenantRelatedField(Preset, allow_null=True, required=False)
    image_config = TenantRelatedField(
        ImageConfig,
        allow_null=True,
        required=False,
        help_text="Where the front tool loop's chat pictures are drawn (/api/v1/image-configs/).",
    )
    agenticV2 = ConfigObjectField(source="agentic_v2", required=False, allow_null=True)  # noqa: N815
    storyV1 = ConfigObjectField(source="story_v1", required=False, allow_null=True)  # noqa: N815
    compact = ConfigObjectField(required=False, allow_null=True)
    preActorDirector = ConfigObjectField(  # noqa: N815
        source="pre_actor_director", required=False, allow_null=True
    )
    memoryRuntime = serializers.ChoiceField(  # noqa: N815
        source="memory_runtime", choices=["internal", "external", "off"], required=False
    )
    externalMemory = ConfigObjectField(  # noqa: N815
        source="external_memory", required=False, allow_null=True
    )
    worldbook = ConfigObjectField(required=False, allow_null=True)
    dio = ConfigObjectField(required=False, allow_null=True)
    workflow = ConfigObjectField(
        required=False,
        allow_null=True,
        help_text="A declared workflow {visibleCapabilities, executionGraph: {nodes}, "
        "failurePolicy} run before each reply (docs/workflows.md); refused with a 422 "
        "naming the node when it does not plan.",
    )

    class Meta:
        model = Scenario
        fields = [
            "id",
            "name",
            "description",
            "model_config",
            "preset",
            "image_config",
            "agenticV2",
            "storyV1",
            "compact",
            "preActorDirector",
            "memoryRuntime",
            "externalMemory",
            "worldbook",
            "dio",
            "workflow",
            "version",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "created_at", "updated_at"]

    def validate(self, attrs):
        attrs = super().validate(attrs)
        # The service takes the config objects by the seed's names.
        for seed, field in scenarios.CONFIG_FIELDS.items():
            if field in attrs:
                attrs[seed] = attrs.pop(field)
        return attrs


class ScenarioViewSet(ServiceWrites):
    model = Scenario
    serializer_class = ScenarioSerializer
    required_scope = Scope.CONTENT
    read_scopes = (Scope.CONTENT, Scope.PLAY)
    ordering = ("name", "created_at")
    create_service = scenarios.create_scenario
    update_service = scenarios.update_scenario
    delete_service = scenarios.delete_scenario
