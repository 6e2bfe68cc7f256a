"""The shapes of the images API, for the OpenAPI document (pydantic, as worldbook's).

Bodies are *validated* by ``images.engine`` (request, config), which knows limits a schema
cannot say (UTF-8 bytes, a URL without credentials); these classes document them. Every
model forbids unknown fields.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from images.engine.request import (
    MAX_CONFIG_REF_BYTES,
    MAX_COUNT,
    MAX_PROMPT_BYTES,
    MAX_REFERENCE_IMAGES,
    MAX_SAFE_INTEGER,
)

Side = Annotated[int, Field(ge=64, le=8192)]
Provider = Literal["openai_compatible", "automatic1111"]
Mode = Literal["backend", "call", "none"]
ClassName = Annotated[str, Field(min_length=1, max_length=100)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GenerationRequest(_Strict):
    """``prompt`` at most 32,768 UTF-8 bytes; at most 9 ``http(s)`` reference URLs without
    credentials; ``image_config`` a config's id or name (at most 256 UTF-8 bytes)."""

    prompt: Annotated[str, Field(min_length=1, max_length=MAX_PROMPT_BYTES)]
    image_config: Annotated[str, Field(min_length=1, max_length=MAX_CONFIG_REF_BYTES)]
    reference_images: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=4096)]] | None,
        Field(max_length=MAX_REFERENCE_IMAGES),
    ] = None
    count: Annotated[int, Field(ge=1, le=MAX_COUNT)] | None = None
    width: Annotated[int, Field(ge=1, le=MAX_SAFE_INTEGER)] | None = None
    height: Annotated[int, Field(ge=1, le=MAX_SAFE_INTEGER)] | None = None


class ModerationItem(_Strict):
    asset_url: str
    status: str
    classification: str | None
    blocked: bool


class Withheld(_Strict):
    index: int
    outcome: str
    code: str


class GenerationJob(_Strict):
    task_id: str
    status: Literal["submitted", "completed", "unknown", "failed"]
    image_urls: list[str]
    moderation: list[ModerationItem]
    withheld: list[Withheld]
    code: str


class GenerationResponse(_Strict):
    """``moderation_status``: ``COMPLETED`` (every image answered), ``unknown`` (a timeout or
    incomplete evidence: never resubmitted), ``unmoderated`` (a config without moderation)."""

    moderation_status: str
    jobs: list[GenerationJob]
    replayed: bool


class ImageConfigCreate(_Strict):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    provider: Provider
    base_url: Annotated[str, Field(min_length=1, max_length=500)]
    api_key_env: Annotated[str, Field(max_length=100)] = ""
    model: Annotated[str, Field(max_length=200)] = ""
    default_width: Side = 1024
    default_height: Side = 1024
    default_count: Annotated[int, Field(ge=1, le=8)] = 1
    moderation_mode: Mode = "backend"
    moderation_base_url: Annotated[str, Field(max_length=500)] = ""
    moderation_model: Annotated[str, Field(max_length=200)] = ""
    allowed_classifications: Annotated[list[ClassName], Field(min_length=1, max_length=20)] = [
        "SFW"
    ]
    timeout_seconds: Annotated[int, Field(ge=1, le=600)] = 120
    slot_deadline_seconds: Annotated[int, Field(ge=10, le=86_400)] = 600


class ImageConfigUpdate(_Strict):
    name: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    provider: Provider | None = None
    base_url: Annotated[str, Field(min_length=1, max_length=500)] | None = None
    api_key_env: Annotated[str, Field(max_length=100)] | None = None
    model: Annotated[str, Field(max_length=200)] | None = None
    default_width: Side | None = None
    default_height: Side | None = None
    default_count: Annotated[int, Field(ge=1, le=8)] | None = None
    moderation_mode: Mode | None = None
    moderation_base_url: Annotated[str, Field(max_length=500)] | None = None
    moderation_model: Annotated[str, Field(max_length=200)] | None = None
    allowed_classifications: (
        Annotated[list[ClassName], Field(min_length=1, max_length=20)] | None
    ) = None
    timeout_seconds: Annotated[int, Field(ge=1, le=600)] | None = None
    slot_deadline_seconds: Annotated[int, Field(ge=10, le=86_400)] | None = None


class ImageConfigOut(_Strict):
    id: str
    name: str
    provider: Provider
    base_url: str
    api_key_env: str
    api_key_configured: bool
    model: str
    default_width: int
    default_height: int
    default_count: int
    moderation_mode: Mode
    moderation_base_url: str
    moderation_model: str
    allowed_classifications: list[str]
    timeout_seconds: int
    slot_deadline_seconds: int
    created_at: datetime
    updated_at: datetime


class ImageConfigPage(_Strict):
    count: int
    next: str | None
    previous: str | None
    results: list[ImageConfigOut]


class ConfigTestOut(_Strict):
    """``ok`` with a signed link to the test picture, or the failure's code and message."""

    ok: bool
    latency_ms: float
    moderation_status: str
    image_url: str
    task_id: str
    error_code: str | None
    error_message: str | None
    warnings: list[str]
