"""Writes of the runtime that carry rules: characters, model configs, conversations.

Views validate input with forms and then call these; the rules live here so the console and
any later caller (API, commands) apply the same ones: related objects must belong to the
same tenant, one default model config per tenant (switched under a row lock), and deleting a
character also clears the message-store sessions of the conversations it takes with it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from asgiref.sync import async_to_sync
from django.db import IntegrityError, transaction

from memory import services as message_store
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.models import Character, Conversation, ModelConfig

logger = logging.getLogger(__name__)

CHARACTER_FIELDS = ("name", "description", "first_message", "example_dialogues", "model_config")
MODEL_CONFIG_FIELDS = (
    "name",
    "provider",
    "model",
    "base_url",
    "api_key_env",
    "context_limit",
    "max_output_tokens",
    "temperature",
    "top_p",
    "timeout_ms",
    "extra",
)
TEST_PROMPT = [{"role": "user", "content": "Say hello in five words."}]
TEST_MAX_TOKENS = 16
TEST_PURPOSE = "console_test"
_ERROR_MESSAGE_MAX = 500


class DuplicateName(ValueError):
    """Another row of the tenant already has this name (a race the form check missed)."""


def _same_tenant(tenant, *objects) -> None:
    for obj in objects:
        if obj is not None and obj.tenant_id != tenant.pk:
            raise ValueError(f"{type(obj).__name__} belongs to another tenant")


def _assign(instance, fields: dict, allowed: tuple[str, ...]) -> None:
    unknown = set(fields) - set(allowed)
    if unknown:
        raise TypeError(f"unknown fields: {sorted(unknown)}")
    for name, value in fields.items():
        setattr(instance, name, value)


# --- characters ------------------------------------------------------------------------


def create_character(tenant, **fields) -> Character:
    _same_tenant(tenant, fields.get("model_config"))
    character = Character(tenant=tenant)
    _assign(character, fields, CHARACTER_FIELDS)
    character.save()
    return character


def update_character(character: Character, **fields) -> Character:
    _same_tenant(character.tenant, fields.get("model_config"))
    _assign(character, fields, CHARACTER_FIELDS)
    character.save()
    return character


@transaction.atomic
def delete_character(character: Character) -> int:
    """Delete the character, its conversations and their stored messages; returns how many
    conversations went. The message store keys sessions by id without a foreign key, so
    without this its rows would outlive the conversations."""
    conversations = list(
        Conversation.objects.filter(tenant=character.tenant, character=character).values_list(
            "id", flat=True
        )
    )
    for conversation_id in conversations:
        message_store.clear_session(character.tenant, str(conversation_id))
    character.delete()
    return len(conversations)


# --- model configs ---------------------------------------------------------------------


def create_model_config(tenant, **fields) -> ModelConfig:
    config = ModelConfig(tenant=tenant)
    _assign(config, fields, MODEL_CONFIG_FIELDS)
    return _save_config(config)


def update_model_config(config: ModelConfig, **fields) -> ModelConfig:
    _assign(config, fields, MODEL_CONFIG_FIELDS)
    return _save_config(config)


def _save_config(config: ModelConfig) -> ModelConfig:
    try:
        with transaction.atomic():
            config.save()
    except IntegrityError as exc:
        raise DuplicateName("a model config with this name already exists") from exc
    return config


def delete_model_config(config: ModelConfig) -> None:
    """Characters and conversations that named it fall back to the next config in line."""
    config.delete()


@transaction.atomic
def make_default_model_config(config: ModelConfig) -> ModelConfig:
    """Make ``config`` the tenant's default. The tenant's configs are locked first so two
    concurrent switches serialise instead of tripping the one-default constraint."""
    list(ModelConfig.objects.select_for_update().filter(tenant_id=config.tenant_id))
    ModelConfig.objects.filter(tenant_id=config.tenant_id, is_default=True).exclude(
        pk=config.pk
    ).update(is_default=False)
    ModelConfig.objects.filter(pk=config.pk).update(is_default=True)
    config.is_default = True
    return config


@dataclass(frozen=True)
class ConfigTestResult:
    """What the console shows after a test completion: the text and figures, or the error."""

    ok: bool
    latency_ms: float
    text: str = ""
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    attempts: int = 0
    error_code: str | None = None
    error_message: str | None = None


def run_config_test(tenant, config: ModelConfig) -> ConfigTestResult:
    """One short completion through the real gateway (recorded as a ModelCall).

    Every failure becomes a result with a code, so the console shows it instead of a 500:
    gateway errors keep their stable code; a provider that cannot even be built (a missing
    local runtime, an invalid config) is ``provider_unavailable``.
    """
    started = time.perf_counter()

    def elapsed() -> float:
        return round((time.perf_counter() - started) * 1000, 1)

    try:
        gateway = Gateway(tenant, config, TEST_PURPOSE)
        result = async_to_sync(gateway.complete)(TEST_PROMPT, max_tokens=TEST_MAX_TOKENS)
    except ModelError as exc:
        return ConfigTestResult(
            ok=False,
            latency_ms=elapsed(),
            error_code=exc.code,
            error_message=exc.message[:_ERROR_MESSAGE_MAX],
        )
    except Exception as exc:  # the console must show it, not crash
        logger.warning("model config test failed", exc_info=True)
        return ConfigTestResult(
            ok=False,
            latency_ms=elapsed(),
            error_code="provider_unavailable",
            error_message=f"{type(exc).__name__}: {exc}"[:_ERROR_MESSAGE_MAX],
        )
    return ConfigTestResult(
        ok=True,
        latency_ms=round(result.latency_ms, 1),
        text=result.content,
        model=result.model,
        input_tokens=result.usage.input_tokens,
        output_tokens=result.usage.output_tokens,
        total_tokens=result.usage.total_tokens,
        attempts=result.attempts,
    )


# --- conversations ---------------------------------------------------------------------


def start_conversation(
    tenant, *, character, player, model_config: ModelConfig | None = None, title: str = ""
) -> Conversation:
    _same_tenant(tenant, character, player, model_config)
    return Conversation.objects.create(
        tenant=tenant,
        character=character,
        player=player,
        model_config=model_config,
        title=title,
    )
