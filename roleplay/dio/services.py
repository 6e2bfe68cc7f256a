"""DIO's writes (``docs/dio.md``): accept a submission (a duplicate request id is refused),
end a task, and make a new version of the prompt in force by compare-and-set, whether a
compile made it or an operator reverted to an earlier one or switched DIO off (both
audited).

A version is written over ``expected``, the newest version number the writer read (0 before
the first): when the newest is another one, :class:`VersionConflict` (409) names it; two
writers racing for the same number meet the unique constraint, and the loser gets the same
conflict.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from console import audit, task_send
from console.models import AuditAction
from console.scoping import is_uuid
from console.storable import unstorable_at
from roleplay.dio import events, selectors
from roleplay.dio.engine.compiler import sha256
from roleplay.dio.engine.ports import Identity
from roleplay.dio.engine.protocol import Submission, receipt_answer
from roleplay.dio.errors import DioDuplicate, DioInvalid, DioNotFound, VersionConflict
from roleplay.dio.models import DioPromptVersion, DioTask, DioTaskStatus, VersionKind
from roleplay.models import Conversation

log = logging.getLogger(__name__)
TASK_BUDGET = timedelta(minutes=16)  # the seed's background budget
COMPILE_TASK = "roleplay.dio_compile"


def conversation_of(tenant_id, identity: Identity) -> Conversation:
    """The identity's conversation, the tenant's (else 404 ``conversation_not_found``)."""
    found = None
    if is_uuid(identity.conversation_id):
        rows = Conversation.objects.select_related("character", "player", "tenant")
        if tenant_id is not None:
            rows = rows.filter(tenant_id=tenant_id)
        found = rows.filter(pk=identity.conversation_id).first()
    if found is None:
        raise DioNotFound("conversation_not_found", "no such conversation")
    return found


def dio_model_ref(conversation: Conversation) -> str:
    """The model config compiling for ``conversation``: its scenario's ``dio.modelConfigId``
    (else the Actor's config, resolved when the task runs)."""
    scenario = conversation.scenario or conversation.character.default_scenario
    config = getattr(scenario, "dio", None) if scenario is not None else None
    ref = config.get("modelConfigId") if isinstance(config, dict) else None
    return ref if isinstance(ref, str) else ""


def schedule(tenant_id, submission: Submission, *, model_config_ref: str | None = None) -> DioTask:
    """Accept ``submission``: a processing task, its compile queued once committed, the
    ``dio.accepted`` event sent. A request id the tenant used already is a duplicate; text
    the database cannot store (a NUL, a lone surrogate) is a 422 ``invalid_text``, from
    every door (the console's box reached the database with it: a 500)."""
    texts = {
        "instruction": submission.instruction,
        "language": submission.language,
        "requestId": submission.request_id,
        "taskMessageId": submission.task_message_id,
    }
    found = unstorable_at(texts, "submission")
    if found is not None:
        raise DioInvalid("invalid_text", found[1], {"field": found[0]})
    conversation = conversation_of(tenant_id, submission.identity)
    identity = submission.identity
    ref = dio_model_ref(conversation) if model_config_ref is None else model_config_ref
    try:
        with transaction.atomic():
            task = DioTask.objects.create(
                tenant_id=conversation.tenant_id,
                request_id=submission.request_id,
                task_message_id=submission.task_message_id,
                conversation=conversation,
                user_id=identity.user_id,
                target_prompt_id=identity.target_prompt_id,
                instruction=submission.instruction,
                language=submission.language,
                model_config_ref=ref,
                deadline=timezone.now() + TASK_BUDGET,
            )
    except IntegrityError:
        raise DioDuplicate(submission.request_id) from None
    receipt = receipt_answer(submission)
    transaction.on_commit(lambda: _enqueue(task))
    transaction.on_commit(lambda: events.accepted(str(conversation.pk), receipt))
    return task


def _enqueue(task: DioTask) -> None:
    try:
        task_send.named(COMPILE_TASK).delay(str(task.pk))
    except Exception as exc:  # the broker is down: the task ends now rather than at 16 min
        log.warning("could not queue DIO task %s", task.pk, exc_info=True)
        finish(task, DioTaskStatus.FAILED, code="dio_unavailable", message=str(exc)[:200])


def finish(
    task: DioTask,
    status: str,
    *,
    code: str = "",
    message: str = "",
    prompt_changed: bool = False,
    version: DioPromptVersion | None = None,
    source: DioPromptVersion | None = None,
) -> bool:
    """End ``task`` once (a task already ended stays as it ended); announce it."""
    prompt = version or source
    fields: dict[str, Any] = {
        "status": status,
        "error_code": code,
        "error_message": message[:500],
        "prompt_changed": prompt_changed,
        "result_version": version,
        "source_version": source,
        "compiled_sha256": prompt.sha256 if prompt is not None else "",
        "finished_at": timezone.now(),
    }
    moved = DioTask.objects.filter(pk=task.pk, status=DioTaskStatus.PROCESSING).update(**fields)
    if moved:
        number = version.version if version is not None else None
        events.completed(str(task.conversation_id), task.request_id, status, prompt_changed,
                         number)  # fmt: skip
    return bool(moved)


def expire_overdue() -> int:
    """End as ``timed_out`` every task still ``processing`` past its deadline (the
    ``roleplay.dio_expire`` sweep, every minute): a compile whose worker died, or whose
    message was lost, would otherwise stay ``processing`` for good and its player would never
    hear of it. Each end is announced like any other; how many were ended."""
    overdue = DioTask.objects.filter(
        status=DioTaskStatus.PROCESSING, deadline__lt=timezone.now()
    ).only("pk", "conversation_id", "request_id")
    return sum(
        finish(
            task,
            DioTaskStatus.TIMED_OUT,
            code="dio_timed_out",
            message="the task did not finish within 16 minutes",
        )  # fmt: skip
        for task in overdue.iterator()
    )


def commit_version(
    conversation: Conversation, identity: Identity, *, expected: int, kind: str, **fields: Any
) -> DioPromptVersion:
    """A new version over ``expected`` (module doc)."""
    latest = selectors.latest_version(conversation.tenant_id, identity)
    current = selectors.version_number(latest)
    if current != expected:
        raise VersionConflict(current, expected)
    prompt = fields.pop("compiled_prompt", "")
    try:
        with transaction.atomic():
            return DioPromptVersion.objects.create(
                tenant_id=conversation.tenant_id,
                conversation=conversation,
                user_id=identity.user_id,
                target_prompt_id=identity.target_prompt_id,
                version=expected + 1,
                kind=kind,
                compiled_prompt=prompt,
                sha256=sha256(prompt) if prompt else "",
                **fields,
            )
    except IntegrityError:
        now = selectors.version_number(selectors.latest_version(conversation.tenant_id, identity))
        raise VersionConflict(now, expected) from None


def _audit(conversation, identity, version, *, request=None, user=None) -> None:
    details = {
        "conversation": str(conversation.pk),
        "userId": identity.user_id,
        "targetPromptId": identity.target_prompt_id,
        "version": version.version,
        "kind": version.kind,
    }
    if version.kind == VersionKind.REVERT:
        details["to"] = version.changeset[0].get("to") if version.changeset else None
    audit.record(AuditAction.DIO_VERSION, request=request, user=user, details=details,
                 tenant=conversation.tenant)  # fmt: skip


def revert(
    conversation: Conversation, identity: Identity, *, to: int, expected: int, by: str = "",
    request=None, user=None,
) -> DioPromptVersion:  # fmt: skip
    """Version ``to``'s prompt in force again, as a new version (compare-and-set)."""
    old = selectors.identity_versions(conversation.tenant_id, identity).filter(version=to).first()
    if old is None:
        raise DioNotFound("not_found", f"the DIO prompt has no version {to}")
    if old.kind == VersionKind.OFF:
        raise DioInvalid("dio_revert_to_off", f"version {to} is DIO switched off: use off")
    with transaction.atomic():
        version = commit_version(
            conversation, identity, expected=expected, kind=VersionKind.REVERT,
            compiled_prompt=old.compiled_prompt, instructions=list(old.instructions),
            changeset=[{"op": "revert", "text": f"version {to} in force again", "to": to}],
            source_version=old, created_by=by,
        )  # fmt: skip
        _audit(conversation, identity, version, request=request, user=user)
    return version


def switch_off(
    conversation: Conversation, identity: Identity, *, expected: int, by: str = "",
    request=None, user=None,
) -> DioPromptVersion:  # fmt: skip
    """No DIO prompt in force for ``identity`` (a new ``off`` version, compare-and-set);
    the next compile starts again from the original prompt."""
    with transaction.atomic():
        version = commit_version(
            conversation, identity, expected=expected, kind=VersionKind.OFF,
            changeset=[{"op": "off", "text": "DIO switched off"}], created_by=by,
        )  # fmt: skip
        _audit(conversation, identity, version, request=request, user=user)
    return version
