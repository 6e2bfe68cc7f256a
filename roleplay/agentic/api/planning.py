"""A conversation's Agent V2 background runs (``planning-runs/``, one per turn) and its
auto-reply suggestions (``auto-replies``)."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.scoping import is_uuid
from console.serializers import RejectUnknownFields, validated
from roleplay.agentic import recorded
from roleplay.agentic.engine import inputs as agentic_inputs
from roleplay.conversations.services import auto_replies
from roleplay.errors import NotFound
from roleplay.llm.gateway import on_caller_thread
from roleplay.models import PlanningRun

MAX_RUNS = 50
TURN_ID = OpenApiParameter("turn_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


class PlanningRunSerializer(serializers.ModelSerializer):
    turn_id = serializers.UUIDField()
    scenario = serializers.UUIDField(source="scenario_id")
    snapshot_revision = serializers.SerializerMethodField()
    guidance = serializers.SerializerMethodField()

    class Meta:
        model = PlanningRun
        fields = [
            "id", "turn_id", "scenario", "assistant_message_id", "source_turn", "status",
            "outcome", "error_code", "snapshot_revision", "guidance", "tools_requested",
            "tools_run", "specialists", "director", "ignored_calls", "timings", "model_calls",
            "governance",
            "revision", "deliveries", "created_at", "started_at", "finished_at",
        ]  # fmt: skip

    def get_snapshot_revision(self, run) -> int:
        return int(run.snapshot.get("revision", 0))

    def get_guidance(self, run) -> str:
        return agentic_inputs.recorded_guidance(run.snapshot)


class PlanningRunListSerializer(serializers.Serializer):
    results = PlanningRunSerializer(many=True)


class AutoReplyBody(RejectUnknownFields, serializers.Serializer):
    assistant_message_id = serializers.UUIDField()
    language = serializers.RegexField(r"^[^\x00-\x1f{}]{1,40}$", max_length=40)
    wait_ms = serializers.IntegerField(min_value=0, max_value=120000, required=False)


class UsageSerializer(serializers.Serializer):
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()


class AutoRepliesSerializer(serializers.Serializer):
    options = serializers.ListField(child=serializers.CharField())
    usage = UsageSerializer()


class PlanningActions:
    """Actions of the conversation viewset on its background runs and auto-replies."""

    def _runs(self, conversation):
        return PlanningRun.objects.filter(
            tenant_id=conversation.tenant_id, conversation=conversation
        ).order_by("-created_at")

    @extend_schema(responses=PlanningRunListSerializer, operation_id="conversation_planning_runs")
    @action(detail=True, methods=["get"], url_path="planning-runs")
    def planning_runs(self, request, pk=None):
        """The newest 50 turns' background runs, newest first."""
        rows = list(self._runs(self.get_object())[:MAX_RUNS])
        recorded.restore_all(rows)
        return Response({"results": PlanningRunSerializer(rows, many=True).data})

    @extend_schema(parameters=[TURN_ID], responses=PlanningRunSerializer)
    @action(detail=True, methods=["get"], url_path=r"planning-runs/(?P<turn_id>[^/.]+)")
    def planning_run(self, request, pk=None, turn_id=None):
        """One turn's background run: its snapshot, tools, specialists' results, the
        Director's attempts, outcome, timings and model calls."""
        conversation = self.get_object()
        found = self._runs(conversation).filter(turn_id=turn_id) if is_uuid(turn_id) else None
        run = found.first() if found is not None else None
        if run is None:
            raise NotFound(message="this turn has no background run")
        return Response(PlanningRunSerializer(recorded.restore(run)).data)

    @extend_schema(request=AutoReplyBody, responses=AutoRepliesSerializer)
    @action(detail=True, methods=["post"], url_path="auto-replies")
    def auto_replies(self, request, pk=None):
        """Three options for the user's next message after ``assistant_message_id``; writes
        nothing. 503 ``turn_start_snapshot_not_ready`` (retryable) when the reply's turn-start
        state is not recorded within ``wait_ms``; 502 ``auto_reply_failed``."""
        conversation = self.get_object()
        body = validated(AutoReplyBody, request)
        answer = async_to_sync(auto_replies.suggest)(
            conversation,
            message_id=str(body["assistant_message_id"]),
            language=body["language"],
            wait_ms=body.get("wait_ms"),
            db=on_caller_thread,
        )
        return Response(answer)
