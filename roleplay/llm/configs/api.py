"""The model config's REST shapes: a config (its key named by an environment variable, never
stored) and the Test button's request."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.serializers import (
    StrictSerializer,
    TenantRelatedField,
)
from roleplay.llm.configs.selectors import api_key_status, cache_stats
from roleplay.llm.configs.services import MODEL_CONFIG_FIELDS
from roleplay.llm.tokenizers.models import TOKENIZER_JSON_MAX_CHARS
from roleplay.models import (
    ModelConfig,
    Preset,
)


class ModelConfigCacheSerializer(serializers.Serializer):
    """The config's prompt-cache hit rate: cached prompt tokens over prompt tokens of its
    last successful calls (``hit_rate`` null before any)."""

    calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    cached_tokens = serializers.IntegerField()
    hit_rate = serializers.FloatField(allow_null=True)


class ModelConfigSerializer(StrictSerializer):
    """How to reach a model. ``api_key_env`` names an environment variable; keys never
    appear here (``api_key_configured`` says whether that variable is set). ``preset`` is the
    tenant's preset its prompts come from; null means the shipped default preset.
    ``prompt_cache`` asks the server to cache prompts (``auto``, ``on``, ``off``); ``cache``
    is the read-only hit rate of its recent calls. ``tokenizer`` is what its budgets count
    with (``cl100k``, ``o200k``, ``gguf``: the local GGUF's vocabulary, ``hf``: a
    ``tokenizer.json`` sent as ``tokenizer_json``, write-only, stored by its
    ``tokenizer_sha256``); one that does not load is a 422 (``tokenizer_json_invalid``,
    ``tokenizer_unavailable``)."""

    api_key_configured = serializers.SerializerMethodField()
    tokenizer_json = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=TOKENIZER_JSON_MAX_CHARS,
    )
    cache = serializers.SerializerMethodField()
    preset = TenantRelatedField(Preset, allow_null=True, required=False)

    class Meta:
        model = ModelConfig
        fields = [
            "id",
            *MODEL_CONFIG_FIELDS,
            "tokenizer_json",
            "tokenizer_sha256",
            "api_key_configured",
            "cache",
            "is_default",
            "is_demo",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "tokenizer_sha256", "is_demo", "created_at", "updated_at"]

    def get_api_key_configured(self, obj) -> bool:
        return api_key_status(obj) == "set"

    @extend_schema_field(ModelConfigCacheSerializer)
    def get_cache(self, obj) -> dict:
        return cache_stats(obj.tenant_id, [obj.pk])[obj.pk].as_dict()


class ConfigTestSerializer(serializers.Serializer):
    """``POST /api/v1/model-configs/{id}/test``: one short streamed reply through the gateway
    to a turn-shaped prompt (recorded as a ``ModelCall``, purpose ``console_test``). A
    failure is an answer too: ``ok`` false with the gateway's code, and the models the
    server lists when it can; a success may carry ``warnings`` (an empty reply, an order of
    messages the server refused)."""

    ok = serializers.BooleanField()
    latency_ms = serializers.FloatField()
    text = serializers.CharField()
    model = serializers.CharField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()
    attempts = serializers.IntegerField()
    error_code = serializers.CharField(allow_null=True)
    error_message = serializers.CharField(allow_null=True)
    offered_models = serializers.ListField(child=serializers.CharField())
    warnings = serializers.ListField(child=serializers.CharField())
