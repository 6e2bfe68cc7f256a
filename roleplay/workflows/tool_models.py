"""What an operator allows a workflow to call: HTTP endpoints (a URL prefix and its method)
and MCP servers (a streamable-HTTP URL and the tool names a node may call). Registered with
the runtime's models (``roleplay.models`` imports them).

A workflow node names one of these by ``name``; nothing outside the tenant's own rows can
be called, and the key is named by an environment variable, never stored.
"""

from __future__ import annotations

import uuid

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from console.scoping import TenantScopedModel
from roleplay.validation import validate_api_key_env

# How a node names an endpoint or a server: letters, digits, ``_ . -``.
TOOL_NAME = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$",
    "Letters, digits, '_', '.' and '-' (starting with a letter or digit), at most 100.",
)
# An HTTP header name (RFC 9110 token characters).
HEADER_NAME = RegexValidator(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$", "Not an HTTP header name.")

HTTP_TIMEOUT_MS = (100, 60_000)
HTTP_MAX_RESPONSE_BYTES = (1, 10 * 1024 * 1024)
MCP_TIMEOUT_MS = (100, 120_000)


class HttpMethod(models.TextChoices):
    GET = "GET", "GET"
    POST = "POST", "POST (a JSON body)"


class HttpToolEndpoint(TenantScopedModel):
    """One allowed HTTP endpoint: a node calls ``url_prefix`` + its ``path`` with ``method``,
    within ``timeout_ms``, reading at most ``max_response_bytes``. The key (if any) goes in
    ``api_key_header`` (blank: ``Authorization: Bearer <key>``)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100, validators=[TOOL_NAME])
    description = models.CharField(max_length=500, blank=True, default="")
    url_prefix = models.CharField(max_length=500)
    method = models.CharField(max_length=8, choices=HttpMethod.choices, default=HttpMethod.GET)
    timeout_ms = models.PositiveIntegerField(
        default=10_000,
        validators=[MinValueValidator(HTTP_TIMEOUT_MS[0]), MaxValueValidator(HTTP_TIMEOUT_MS[1])],
    )
    max_response_bytes = models.PositiveIntegerField(
        default=1024 * 1024,
        validators=[
            MinValueValidator(HTTP_MAX_RESPONSE_BYTES[0]),
            MaxValueValidator(HTTP_MAX_RESPONSE_BYTES[1]),
        ],
    )
    api_key_env = models.CharField(
        max_length=100, blank=True, default="", validators=[validate_api_key_env]
    )
    api_key_header = models.CharField(
        max_length=100, blank=True, default="", validators=[HEADER_NAME]
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "HTTP tool endpoint"
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="httptoolendpoint_unique_name")
        ]

    def __str__(self) -> str:
        return self.name


def no_tools() -> list[str]:
    return []


class McpServer(TenantScopedModel):
    """One allowed MCP server (streamable HTTP at ``url``) and the only tools of it a node
    may call (``allowed_tools``); each call is bounded by ``timeout_ms``."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100, validators=[TOOL_NAME])
    description = models.CharField(max_length=500, blank=True, default="")
    url = models.CharField(max_length=500)
    allowed_tools = models.JSONField(default=no_tools)
    api_key_env = models.CharField(
        max_length=100, blank=True, default="", validators=[validate_api_key_env]
    )
    timeout_ms = models.PositiveIntegerField(
        default=30_000,
        validators=[MinValueValidator(MCP_TIMEOUT_MS[0]), MaxValueValidator(MCP_TIMEOUT_MS[1])],
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "MCP server"
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="mcpserver_unique_name")
        ]

    def __str__(self) -> str:
        return self.name
