"""``http_tool``: a workflow node calls one of the HTTP endpoints its operator registered.

Input (``engine.tool_inputs.HTTP_INPUT_SCHEMA``): ``endpoint`` (a registered name of the
run's tenant), ``path`` (appended to the endpoint's URL prefix), ``query``, ``body`` (JSON,
POST endpoints only), ``emitPrompt`` and ``promptMaxChars``. The URL must stay under the
endpoint's prefix, and an endpoint that is not the tenant's is ``forbidden_url`` like a
URL outside every prefix. The call goes through the SSRF guard (``console.outbound``: public
addresses only, unless the deployment allows loopback or private networks), follows no
redirect, is bounded by the endpoint's timeout (``timeout``) and reads at most its
``max_response_bytes`` (streamed; one byte more is ``response_too_large``). A status outside
2xx is ``upstream_error``. The value is the parsed JSON of a JSON answer, else its text;
with ``emitPrompt`` that value (as text, capped) is also the node's ``prompt_content``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import httpx2
from asgiref.sync import sync_to_async

from console import outbound
from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityError, CapabilityValue
from roleplay.workflows.engine.tool_inputs import (
    HTTP_INPUT_SCHEMA,
    HttpInput,
    InputError,
    join_under_prefix,
    parse_http_input,
    prompt_text,
    under_prefix,
)
from roleplay.workflows.tool_models import HttpToolEndpoint
from roleplay.workflows.tools import selectors
from roleplay.workflows.tools.calls import api_key, bounded, policy

NAME = "http_tool"
TEXT_TYPES = ("text/", "application/xml", "application/x-www-form-urlencoded")


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    query: tuple[tuple[str, str], ...]
    body: Any
    has_body: bool
    headers: dict[str, str]
    max_bytes: int
    timeout_s: float


def _request(endpoint: HttpToolEndpoint, given: HttpInput) -> Request:
    url = join_under_prefix(endpoint.url_prefix, given.path)
    if not under_prefix(url, endpoint.url_prefix):
        raise CapabilityError("forbidden_url", "the URL is not under the endpoint's prefix")
    if given.has_body and endpoint.method != "POST":
        raise CapabilityError("bad_input", f"body: endpoint {endpoint.name!r} takes no body (GET)")
    headers = {}
    key = api_key(endpoint.api_key_env)
    if key is not None:
        header = endpoint.api_key_header or "Authorization"
        headers[header] = key if endpoint.api_key_header else f"Bearer {key}"
    return Request(
        endpoint.method, url, given.query, given.body, given.has_body, headers,
        endpoint.max_response_bytes, endpoint.timeout_ms / 1000,
    )  # fmt: skip


def _too_large(limit: int) -> CapabilityError:
    return CapabilityError("response_too_large", f"the answer is over {limit} bytes")


def _decode(data: bytes, content_type: str, charset: str | None) -> Any:
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/json" or kind.endswith("+json"):
        try:
            return json.loads(data)
        except ValueError as exc:
            raise CapabilityError("upstream_error", "the endpoint's JSON does not parse") from exc
    if kind and not kind.startswith(TEXT_TYPES):
        raise CapabilityError("upstream_error", f"the endpoint answered {kind}, not JSON or text")
    try:
        return data.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")


async def _read(http: httpx2.AsyncClient, request: Request) -> Any:
    extra: dict[str, Any] = {"json": request.body} if request.has_body else {}
    params = list(request.query)
    async with http.stream(request.method, request.url, params=params, **extra) as response:
        if not 200 <= response.status_code < 300:
            note = " (redirects are not followed)" if 300 <= response.status_code < 400 else ""
            message = f"the endpoint answered {response.status_code}{note}"
            raise CapabilityError("upstream_error", message)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > request.max_bytes:
            raise _too_large(request.max_bytes)
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > request.max_bytes:
                raise _too_large(request.max_bytes)
        content_type = response.headers.get("content-type", "")
        return _decode(bytes(body), content_type, response.charset_encoding)


async def call_endpoint(request: Request) -> Any:
    """The endpoint's answer as JSON or text; a coded :class:`CapabilityError` otherwise."""
    try:
        async with outbound.async_client(request.timeout_s, policy(), request.headers) as http:
            return await _read(http, request)
    except outbound.Refused as exc:
        raise CapabilityError("forbidden_url", f"the URL is refused: {exc}") from exc
    except httpx2.TimeoutException as exc:
        raise CapabilityError("timeout", "the endpoint did not answer in time") from exc
    except httpx2.HTTPError as exc:
        message = f"the endpoint failed: {type(exc).__name__}"
        raise CapabilityError("upstream_error", message) from exc


@dataclass
class HttpTool:
    """The capability for one run: it reads only the run tenant's endpoints."""

    scope: registry.RunScope
    name: str = NAME
    input_schema = HTTP_INPUT_SCHEMA

    async def execute(self, call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        try:
            given = parse_http_input(call.input)
        except InputError as exc:
            raise CapabilityError("bad_input", str(exc)) from exc
        named = sync_to_async(selectors.http_endpoint_named)
        endpoint = await named(self.scope.tenant_id, given.endpoint)
        if endpoint is None:
            message = f"no HTTP endpoint named {given.endpoint!r} is registered"
            raise CapabilityError("forbidden_url", message)
        request = _request(endpoint, given)
        value = await bounded(call_endpoint(request), cancel, request.timeout_s)
        prompt = prompt_text(value, given.prompt_max_chars) if given.emit_prompt else None
        return CapabilityValue(value=value, prompt_content=prompt)


registry.register(
    NAME,
    HttpTool,
    description="Call an HTTP endpoint the operator registered (URL prefix, method, limits).",
    input_schema=HTTP_INPUT_SCHEMA,
)
