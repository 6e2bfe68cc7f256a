"""The seed's DIO protocol as JSON, both ways (``002`` lines 1310–1318, ``docs/dio.md``).

One module for both halves, so our endpoints and the external adapter cannot drift:

- :func:`parse_submission` reads a ``POST /v1/chat`` body (our endpoint);
  :func:`submission_body` writes one (the adapter);
- :func:`receipt_answer` / :func:`parse_receipt` the accepted identity;
- :func:`status_answer` / :func:`parse_status` a task by request id;
- :func:`active_answer` / :func:`parse_active` the active prompt (its SHA-256 checked).

A body that breaks a rule is a :class:`SubmissionInvalid` naming the field; an answer that
breaks one is a :class:`~roleplay.dio.engine.ports.DioError` (``dio_identity_mismatch``
when the identity differs from what was sent, ``dio_hash_mismatch`` when the prompt's
SHA-256 is not its own, ``dio_unavailable`` for anything else). Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .compiler import MAX_INSTRUCTION_CHARS, MAX_PROMPT_CHARS, sha256
from .ports import (
    TERMINAL,
    ActivePrompt,
    DioError,
    Identity,
    Receipt,
    TaskStatus,
    dio_conversation_id,
)

MAX_ID_CHARS = 200
MAX_LANGUAGE_CHARS = 35
FIELDS = frozenset(
    {
        "userId", "rpConversationId", "conversationId", "targetPromptId", "instruction",
        "message", "requestId", "taskMessageId", "language",
    }
)  # fmt: skip
STATES = ("processing", *sorted(TERMINAL))
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class SubmissionInvalid(ValueError):
    """A submission breaks a rule: ``field`` names it (the API answers 400)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Submission:
    """One accepted-to-be submission: who, the request and message ids, the instruction."""

    identity: Identity
    request_id: str
    task_message_id: str
    instruction: str
    language: str = ""


def _id(body: dict, field: str, *, required: bool = True) -> str:
    value = body.get(field)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise SubmissionInvalid(field, "a non-empty string is required")
    if len(value) > MAX_ID_CHARS:
        raise SubmissionInvalid(field, f"at most {MAX_ID_CHARS} characters")
    if _CONTROL.search(value) or value != value.strip():
        raise SubmissionInvalid(field, "no control characters or surrounding spaces")
    return value


def _conversation(body: dict) -> str:
    """The RP conversation: ``rpConversationId``; ``conversationId`` may carry the same id
    or its DIO form ``dio_<id>`` (the two must agree when both are sent)."""
    rp = _id(body, "rpConversationId", required=False)
    given = _id(body, "conversationId", required=False)
    if not rp and not given:
        raise SubmissionInvalid("rpConversationId", "a non-empty string is required")
    if not rp:
        rp = given.removeprefix("dio_") if given.startswith("dio_") else given
        if not rp:
            raise SubmissionInvalid("conversationId", "names no conversation")
    elif given and given not in (rp, dio_conversation_id(rp)):
        raise SubmissionInvalid("conversationId", "does not match rpConversationId")
    return rp


def _instruction(body: dict) -> str:
    found = {f: body[f] for f in ("instruction", "message") if f in body}
    if not found:
        raise SubmissionInvalid("instruction", "the player's instruction is required")
    if len(set(map(repr, found.values()))) > 1:
        raise SubmissionInvalid("message", "instruction and message differ")
    field, value = next(iter(found.items()))
    if not isinstance(value, str) or not value.strip():
        raise SubmissionInvalid(field, "a non-empty string is required")
    if len(value) > MAX_INSTRUCTION_CHARS:
        raise SubmissionInvalid(field, f"at most {MAX_INSTRUCTION_CHARS} characters")
    if "\x00" in value:
        raise SubmissionInvalid(field, "no NUL character")
    return value


def parse_submission(body: Any) -> Submission:
    """A ``POST /v1/chat`` body as a :class:`Submission` (module doc)."""
    if not isinstance(body, dict):
        raise SubmissionInvalid("body", "a JSON object is required")
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise SubmissionInvalid(str(unknown[0]), "unknown field")
    identity = Identity(_id(body, "userId"), _conversation(body), _id(body, "targetPromptId"))
    request = _id(body, "requestId")
    message = _id(body, "taskMessageId", required=False) or f"{request}:assistant"
    language = body.get("language", "")
    if not isinstance(language, str) or len(language) > MAX_LANGUAGE_CHARS:
        raise SubmissionInvalid("language", f"a string of at most {MAX_LANGUAGE_CHARS} characters")
    if _CONTROL.search(language):
        raise SubmissionInvalid("language", "no control characters")
    return Submission(identity, request, message, _instruction(body), language)


def submission_body(submission: Submission) -> dict[str, str]:
    """The body the adapter sends for ``submission``."""
    identity = submission.identity
    body = {
        "userId": identity.user_id,
        "rpConversationId": identity.conversation_id,
        "conversationId": dio_conversation_id(identity.conversation_id),
        "targetPromptId": identity.target_prompt_id,
        "instruction": submission.instruction,
        "requestId": submission.request_id,
        "taskMessageId": submission.task_message_id,
    }
    if submission.language:
        body["language"] = submission.language
    return body


def receipt_answer(submission: Submission) -> dict[str, Any]:
    """What ``POST /v1/chat`` answers once the task is accepted."""
    identity = submission.identity
    return {
        "ok": True,
        "accepted": True,
        "conversationId": dio_conversation_id(identity.conversation_id),
        "rpConversationId": identity.conversation_id,
        "targetPromptId": identity.target_prompt_id,
        "requestId": submission.request_id,
        "taskMessageId": submission.task_message_id,
        "appliesFrom": "next_turn",
    }


def _object(answer: Any) -> dict:
    if not isinstance(answer, dict):
        raise DioError("dio_unavailable", "the DIO service's answer is not a JSON object")
    return answer


def parse_receipt(answer: Any, sent: Submission) -> Receipt:
    """The receipt of an accepted submission; the identity must be the one sent."""
    answer = _object(answer)
    if answer.get("ok") is not True or answer.get("accepted") is not True:
        raise DioError("dio_unavailable", "the DIO service did not accept the instruction")
    expected = receipt_answer(sent)
    for field in ("conversationId", "targetPromptId", "requestId", "taskMessageId"):
        if answer.get(field) != expected[field]:
            raise DioError("dio_identity_mismatch", f"{field} is not the one sent")
    return Receipt(expected["conversationId"], sent.request_id, sent.task_message_id)


def status_answer(status: TaskStatus) -> dict[str, Any]:
    return {
        "requestId": status.request_id,
        "status": status.status,
        "promptChanged": status.prompt_changed,
        "sourceVersionId": status.source_version_id,
        "compiledPromptSha256": status.compiled_prompt_sha256,
        "errorCode": status.error_code,
        "errorMessage": status.error_message,
    }


def _optional_text(answer: dict, field: str) -> str | None:
    value = answer.get(field)
    if value is not None and not isinstance(value, str):
        raise DioError("dio_unavailable", f"{field} is not a string")
    return value


def parse_status(answer: Any, request_id: str) -> TaskStatus:
    answer = _object(answer)
    if answer.get("requestId") != request_id:
        raise DioError("dio_identity_mismatch", "requestId is not the one asked for")
    state = answer.get("status")
    if state not in STATES:
        raise DioError("dio_unavailable", f"status {state!r} is not one of {STATES}")
    changed = answer.get("promptChanged", False)
    if not isinstance(changed, bool):
        raise DioError("dio_unavailable", "promptChanged is not a boolean")
    return TaskStatus(
        request_id=request_id,
        status=state,
        prompt_changed=changed,
        source_version_id=_optional_text(answer, "sourceVersionId"),
        compiled_prompt_sha256=_optional_text(answer, "compiledPromptSha256"),
        error_code=_optional_text(answer, "errorCode"),
        error_message=_optional_text(answer, "errorMessage"),
    )


def active_answer(active: ActivePrompt) -> dict[str, Any]:
    return {
        "version": active.version,
        "versionId": active.version_id,
        "compiledPrompt": active.compiled_prompt,
        "sha256": active.sha256,
        "changeset": active.changeset,
        "sourceVersionId": active.source_version_id,
    }


def parse_active(answer: Any) -> ActivePrompt:
    """The active prompt of an answer; its ``sha256`` must be the prompt's own."""
    answer = _object(answer)
    version, version_id = answer.get("version"), answer.get("versionId")
    prompt, digest = answer.get("compiledPrompt"), answer.get("sha256")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise DioError("dio_unavailable", "version is not a positive integer")
    if not isinstance(version_id, str) or not version_id:
        raise DioError("dio_unavailable", "versionId is missing")
    if not isinstance(prompt, str) or not prompt or len(prompt) > MAX_PROMPT_CHARS:
        raise DioError("dio_unavailable", "compiledPrompt is missing or too long")
    if not isinstance(digest, str) or not _HEX64.match(digest) or digest != sha256(prompt):
        raise DioError("dio_hash_mismatch", "the compiled prompt's SHA-256 does not match")
    changeset = answer.get("changeset", [])
    if not isinstance(changeset, list) or not all(isinstance(c, dict) for c in changeset):
        raise DioError("dio_unavailable", "changeset is not a list of objects")
    return ActivePrompt(
        version=version,
        version_id=version_id,
        compiled_prompt=prompt,
        sha256=digest,
        changeset=changeset,
        source_version_id=_optional_text(answer, "sourceVersionId"),
    )


def parse_identity_query(params: Any) -> Identity:
    """The identity of ``GET /v1/director/active-prompt?userId=&conversationId=
    &targetPromptId=`` (``conversationId`` as the RP id or its ``dio_`` form)."""
    if not hasattr(params, "get"):
        raise SubmissionInvalid("query", "userId, conversationId and targetPromptId are required")
    body = {f: params.get(f) for f in ("userId", "conversationId", "targetPromptId")}
    body = {f: v for f, v in body.items() if v is not None}
    for field in ("userId", "conversationId", "targetPromptId"):
        _id(body, field)
    return Identity(body["userId"], _conversation(body), body["targetPromptId"])
