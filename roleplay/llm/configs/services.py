"""Writes of model configs: how to reach a model, and the tenant's one default.

A config names the environment variable that holds its key, never the key (see
``roleplay.validation``), and may name one of the tenant's presets (none: the shipped
default preset). One config per tenant may be the default; the database allows at
most one (a partial unique index), and every switch happens here under a lock on the tenant
row, so two concurrent switches wait for each other instead of tripping the index.
"""

from __future__ import annotations

from django.db import transaction

from console.models import Tenant
from roleplay.llm.bundled import bundled_model_path
from roleplay.llm.tokenizers.services import check_tokenizer, with_tokenizer_file
from roleplay.models import ModelConfig, Provider, TokenizerFile
from roleplay.services import rows
from roleplay.textgen.configs import TEXT_COMPLETION_FIELDS
from roleplay.textgen.services import text_completion_problems, with_template_body

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
    "role_order",
    "prompt_cache",
    "preset",
    "tokenizer",
    *TEXT_COMPLETION_FIELDS,
)


@transaction.atomic
def create_model_config(
    tenant, *, is_default: bool = False, is_demo: bool = False, **fields
) -> ModelConfig:
    """A new config, made the tenant's default if ``is_default``. ``is_demo`` marks the
    bundled demo model (seed data only: no door lets a client set it)."""
    config = ModelConfig(tenant=tenant, is_demo=is_demo)
    _save(config, fields, update=False)
    if is_default:
        make_default_model_config(config)
    return config


@transaction.atomic
def update_model_config(
    config: ModelConfig, *, is_default: bool | None = None, **fields
) -> ModelConfig:
    """Change ``fields``; ``is_default`` True makes it the default, False stops it being
    one, None leaves that as it is."""
    _save(config, fields, update=True)
    if is_default:
        make_default_model_config(config)
    elif is_default is False:
        ModelConfig.objects.filter(pk=config.pk).update(is_default=False)
        config.is_default = False
    return config


def _save(config: ModelConfig, fields: dict, *, update: bool) -> None:
    if fields.get("tokenizer_json") or "tokenizer" in fields:
        _lock_files(config.tenant_id)
    if "api_key_env" in fields:
        fields["api_key_env"] = (fields["api_key_env"] or "").strip()
    if "extra" in fields and fields["extra"] is None:
        fields["extra"] = {}
    rows.write(
        config,
        with_template_body(
            config, with_tokenizer_file(config, fields), model_file=bundled_model_path
        ),
        allowed=(*MODEL_CONFIG_FIELDS, "template_body", "tokenizer_sha256"),
        related=("preset",),
        update=update,
        rules=_rules,
    )
    if update and "tokenizer" in fields:
        _forget_unnamed_files(config.tenant_id)


def model_config_problems(
    *, provider: str, base_url: str, context_limit, max_output_tokens
) -> dict[str, list[str]]:
    """Field name -> messages for the rules across fields of a model config (empty: none).

    An OpenAI-compatible server is reached by URL, so it needs one; the reply must leave room
    for a prompt in the context window. A value that is not a number yet is left to its field
    validator.
    """
    problems: dict[str, list[str]] = {}
    if provider == Provider.OPENAI_COMPATIBLE and not base_url:
        problems["base_url"] = ["Required for OpenAI-compatible servers."]
    numbers = all(
        isinstance(v, int) and not isinstance(v, bool) for v in (context_limit, max_output_tokens)
    )
    if numbers and max_output_tokens >= context_limit:
        problems["max_output_tokens"] = ["Must be smaller than the context limit."]
    return problems


def _rules(config: ModelConfig) -> dict[str, list[str]]:
    check_tokenizer(config)  # a coded 422 of its own, before the field rules
    return model_config_problems(
        provider=config.provider,
        base_url=config.base_url,
        context_limit=config.context_limit,
        max_output_tokens=config.max_output_tokens,
    ) | text_completion_problems(config)


@transaction.atomic
def delete_model_config(config: ModelConfig) -> None:
    """Characters, conversations and turns that named it keep working: the foreign keys are
    set to null, and a turn then uses the next config in line (character's, tenant default,
    then the environment's ``LLM_*`` settings). A ``tokenizer.json`` no other config names
    goes with it."""
    _lock_files(config.tenant_id)
    config.delete()
    _forget_unnamed_files(config.tenant_id)


def _lock_files(tenant_id) -> None:
    """Writes that store or drop a tenant's tokenizer files wait for each other (the
    tenant's row, as the default switch takes it), so a file another write is about to name
    is never dropped as unnamed."""
    list(Tenant.objects.select_for_update(no_key=True).filter(pk=tenant_id).values("pk"))


def _forget_unnamed_files(tenant_id) -> None:
    """Drop the tenant's stored ``tokenizer.json`` files that no model config names."""
    named = ModelConfig.objects.filter(tenant_id=tenant_id).exclude(tokenizer_sha256="")
    TokenizerFile.objects.filter(tenant_id=tenant_id).exclude(
        sha256__in=named.values("tokenizer_sha256")
    ).delete()


def make_default_model_config(config: ModelConfig) -> ModelConfig:
    """Make ``config`` the tenant's default and no other one."""
    return rows.make_the_default(config, "tenant", Tenant)
