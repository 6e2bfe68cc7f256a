"""The adapter to an outside DIO service speaking the seed's protocol (ours on another
deployment, or any with its contract): :class:`ExternalBackend`, over HTTP.

The scenario's ``dio`` config names it: ``serviceUrl`` (the service's root; the paths are
``/v1/chat``, ``/v1/director/tasks/by-request/{requestId}``,
``/v1/director/active-prompt``), ``apiKeyEnv`` (the environment variable holding its API
token, sent as ``Authorization: Bearer``; a value that looks like a pasted key is refused,
``console.secrets``), ``timeoutMs`` (each request's bound, default 10,000).

Every failure is a :class:`DioError`: a timeout, a refused connection or a non-2xx answer
``dio_unavailable`` (a 409 ``dio_duplicate`` stays a duplicate), an accepted identity that
is not the one sent ``dio_identity_mismatch``, an active prompt whose SHA-256 is not its own
``dio_hash_mismatch`` (``engine.protocol``). An accepted submission is followed by the Celery
task ``roleplay.dio_poll``: each second until the task ends or 16 minutes pass, then
``dio.completed`` on the conversation's sockets.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from console import task_send
from console.remote_calls import RemoteFailures
from console.secrets import is_key_name
from roleplay.dio import events
from roleplay.dio.engine.ports import (
    TERMINAL,
    ActivePrompt,
    DioError,
    Identity,
    Receipt,
    ScheduleRequest,
    TaskStatus,
    request_id,
    task_message_id,
)
from roleplay.dio.engine.protocol import (
    Submission,
    parse_active,
    parse_receipt,
    parse_status,
    submission_body,
)

log = logging.getLogger(__name__)
DEFAULT_TIMEOUT_MS = 10_000
MIN_TIMEOUT_MS, MAX_TIMEOUT_MS = 100, 600_000
POLL_BUDGET_S = 16 * 60
POLL_EVERY_S = 1.0
POLL_TASK = "roleplay.dio_poll"

FAILURES = RemoteFailures(
    DioError,
    timeout_code="dio_unavailable",
    timed_out="the DIO service timed out",
    unreachable_code="dio_unavailable",
    status_code="dio_unavailable",
    answered="the DIO service answered {status}",
)


@dataclass(frozen=True)
class ExternalConfig:
    service_url: str
    api_key_env: str = ""
    timeout_ms: int = DEFAULT_TIMEOUT_MS

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> ExternalConfig:
        """The adapter's part of a scenario's ``dio`` config; ``DioError``
        (``dio_config_invalid``) when it cannot be used."""
        url = config.get("serviceUrl")
        env = config.get("apiKeyEnv") or ""
        timeout = config.get("timeoutMs", DEFAULT_TIMEOUT_MS)
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise DioError("dio_config_invalid", "serviceUrl must be an http(s) URL")
        if not isinstance(env, str) or (env and not is_key_name(env)):
            raise DioError("dio_config_invalid", "apiKeyEnv must name an environment variable")
        if isinstance(timeout, bool) or not isinstance(timeout, int):
            raise DioError("dio_config_invalid", "timeoutMs must be an integer")
        if not MIN_TIMEOUT_MS <= timeout <= MAX_TIMEOUT_MS:
            raise DioError("dio_config_invalid",
                           f"timeoutMs must be {MIN_TIMEOUT_MS}..{MAX_TIMEOUT_MS}")  # fmt: skip
        return cls(url.rstrip("/"), env, timeout)

    def as_dict(self) -> dict[str, Any]:
        return {"mode": "external", "serviceUrl": self.service_url,
                "apiKeyEnv": self.api_key_env, "timeoutMs": self.timeout_ms}  # fmt: skip


def _answer(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


class ExternalBackend:
    """:class:`~roleplay.dio.engine.ports.DioBackend` over HTTP (module doc)."""

    announces = False  # the turn sends ``dio.accepted`` once the service took the task
    read_with_turn = False  # the prompt in force is asked for on each turn

    def __init__(self, config: ExternalConfig, *, follow: bool = True) -> None:
        self.config = config
        self.follow = follow  # queue the polling task after an accepted submission

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.config.api_key_env) if self.config.api_key_env else None
        return {"Authorization": f"Bearer {key}"} if key else {}

    async def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        url = self.config.service_url + path
        with FAILURES.calling():
            async with httpx.AsyncClient(timeout=self.config.timeout_ms / 1000) as client:
                return await client.request(method, url, headers=self._headers(), **kwargs)

    async def schedule(self, request: ScheduleRequest) -> Receipt:
        submission = Submission(
            identity=request.identity,
            request_id=request_id(request.turn_id),
            task_message_id=task_message_id(request.turn_id),
            instruction=request.instruction,
            language=request.language,
        )
        response = await self._request("POST", "/v1/chat", json=submission_body(submission))
        answer = _answer(response)
        error = answer.get("error") if isinstance(answer, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        if response.status_code == 409 and code == "dio_duplicate":
            raise DioError("dio_duplicate", f"request {submission.request_id!r} was submitted")
        receipt = parse_receipt(_answer(FAILURES.check(response)), submission)
        if self.follow:
            follow(self.config, request.identity, receipt.request_id)
        return receipt

    async def task(self, request_id: str) -> TaskStatus | None:
        path = "/v1/director/tasks/by-request/" + quote(request_id, safe="")
        response = await self._request("GET", path)
        if response.status_code == 404:
            return None
        return parse_status(_answer(FAILURES.check(response)), request_id)

    async def active_prompt(self, identity: Identity) -> ActivePrompt | None:
        params = {
            "userId": identity.user_id,
            "conversationId": identity.conversation_id,
            "targetPromptId": identity.target_prompt_id,
        }
        response = await self._request("GET", "/v1/director/active-prompt", params=params)
        if response.status_code == 404:
            return None
        return parse_active(_answer(FAILURES.check(response)))


def follow(config: ExternalConfig, identity: Identity, request: str) -> None:
    """Queue the polling of ``request`` (a broker in trouble costs the event only)."""
    args = [config.as_dict(), request, list(_identity_args(identity)), time.time() + POLL_BUDGET_S]
    try:
        task_send.named(POLL_TASK).delay(*args)
    except Exception:
        log.warning("could not queue the polling of DIO request %s", request, exc_info=True)


def _identity_args(identity: Identity) -> tuple[str, str, str]:
    return identity.user_id, identity.conversation_id, identity.target_prompt_id


def poll_once(config: dict, request: str, identity_args: list, deadline: float) -> str:
    """One look at the outside task (the Celery task ``roleplay.dio_poll``): ended, it is
    announced; else looked at again a second later, until ``deadline``."""
    backend = ExternalBackend(ExternalConfig.from_dict(config), follow=False)
    identity = Identity(*identity_args)
    try:
        status = asyncio.run(backend.task(request))
    except DioError as exc:
        log.info("DIO request %s not read: %s", request, exc.code)
        status = None
    if status is not None and status.status in TERMINAL:
        version = None
        if status.prompt_changed:
            try:
                active = asyncio.run(backend.active_prompt(identity))
                version = active.version if active is not None else None
            except DioError:
                version = None
        events.completed(identity.conversation_id, request, status.status,
                         status.prompt_changed, version)  # fmt: skip
        return status.status
    if time.time() + POLL_EVERY_S > deadline:
        events.completed(identity.conversation_id, request, "timed_out", False, None)
        return "timed_out"
    task = task_send.named(POLL_TASK)
    task.apply_async([config, request, identity_args, deadline], countdown=POLL_EVERY_S)
    return "processing"
