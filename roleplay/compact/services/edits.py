"""An operator's actions on a conversation's Compact checkpoint (seed 002, Compact), from any
door (REST, console): edit the summary, regenerate it with the compactor, delete it.

Each acts on the newest version only, and only while it is active, by compare-and-set on the
version the operator saw (``expected_version``; 409 ``checkpoint_version_conflict`` with the
current version when another write came first). Edit and regenerate write a **new** version
(``compact.services.checkpoints.save``) over the same covered messages, with the same
covered count and fingerprints and ``chain`` = the version it replaces, so every version is
kept; delete invalidates the newest (reason ``deleted_by_operator``) and the next turn
rebuilds from the whole history. Each action and its ``compact.checkpoint`` audit event are
written in one transaction; the compactor is asked outside any transaction, and the version
is compared again (under the row lock) before its answer is saved.
"""

from __future__ import annotations

from dataclasses import replace

from asgiref.sync import async_to_sync
from django.db import transaction

from console import audit, failures
from console.models import AuditAction
from console.tokens import count_tokens
from roleplay.compact import model as compact_model
from roleplay.compact import selectors as reads
from roleplay.compact.engine import checkpoint as cp
from roleplay.compact.engine import protocol
from roleplay.compact.services import checkpoints as store
from roleplay.errors import RoleplayError
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.llm.errors import ModelError
from roleplay.models import CompactCheckpoint
from roleplay.players.selectors import persona_for
from roleplay.scenarios.config import Compact

DELETED = "deleted_by_operator"
STRUCTURED = ("canonical", "interaction", "open_threads")
DEFAULT_MAX_SUMMARY_TOKENS = Compact.model_fields["maxSummaryTokens"].default
ACTIONS = ("edit", "regenerate", "delete")


class CheckpointConflict(RoleplayError, failures.Conflict):
    """The checkpoint acted on is not the newest active version, or not the version the
    operator saw (409; ``details.current_version``: the newest, 0 for none)."""

    default_code = "checkpoint_version_conflict"

    def __init__(self, message: str, *, current: int, expected: int) -> None:
        super().__init__(
            message=message, details={"current_version": current, "expected_version": expected}
        )


class SummaryRejected(RoleplayError, failures.Invalid):
    """The operator's summary breaks a rule (422 ``validation_error``; ``details.field``
    names the field, ``details.errors`` as the serializers answer)."""

    default_code = "validation_error"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(
            message=f"{field}: {message}",
            details={"field": field, "errors": [{"loc": field, "msg": message}]},
        )


class CompactNotConfigured(RoleplayError, failures.Invalid):
    """The checkpoint's scenario has no ``compact`` config (or no compactor model config)
    to regenerate with (422)."""

    default_code = "compact_not_configured"


class HistoryChanged(RoleplayError, failures.Conflict):
    """The messages the checkpoint covers are no longer all there (409)."""

    default_code = "checkpoint_history_changed"


class CompactorFailed(RoleplayError, failures.BadGateway):
    """The compactor failed (the gateway's code) or answered no valid summary (502
    ``compact_summary_invalid``)."""

    default_code = "compact_summary_invalid"


def check_summary(summary, output_format: str, max_tokens: int) -> dict:
    """``summary`` in the stored shape, or :class:`SummaryRejected` naming the field: the
    checkpoint's format, plain text or lists of strings (blank items dropped), not empty,
    within ``max_tokens`` as the Actor reads it."""
    if not isinstance(summary, dict):
        raise SummaryRejected("summary", "must be an object")
    given = summary.get("format", output_format)
    if given != output_format:
        raise SummaryRejected("summary.format", f"must be {output_format!r}, the checkpoint's")
    fields = ("text",) if output_format == "plain_text" else STRUCTURED
    for key in summary:
        if key not in (*fields, "format"):
            raise SummaryRejected(f"summary.{key}", "unknown field")
    if output_format == "plain_text":
        text = summary.get("text")
        if not isinstance(text, str):
            raise SummaryRejected("summary.text", "must be a string")
        clean: dict = {"format": "plain_text", "text": _text("summary.text", text).strip()}
        if not clean["text"]:
            raise SummaryRejected("summary.text", "the summary is empty")
    else:
        clean = {"format": "structured_json"}
        for key in STRUCTURED:
            items = summary.get(key)
            if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
                raise SummaryRejected(f"summary.{key}", "must be a list of strings")
            clean[key] = [_text(f"summary.{key}", v).strip() for v in items if v.strip()]
        if not any(clean[key] for key in STRUCTURED):
            raise SummaryRejected("summary", "the summary is empty")
    tokens = count_tokens(cp.summary_text(clean))
    if tokens > max_tokens:
        field = "summary.text" if output_format == "plain_text" else "summary"
        raise SummaryRejected(field, f"is {tokens} tokens, over maxSummaryTokens ({max_tokens})")
    return clean


def _text(field: str, value: str) -> str:
    if "\x00" in value:
        raise SummaryRejected(field, "must not contain NUL characters")
    return value


def edit(
    row: CompactCheckpoint, summary, expected_version: int, *, by: str, request=None, user=None
) -> CompactCheckpoint:
    """Save the operator's ``summary`` for ``row`` (the newest active version) as the next
    version."""
    config = reads.compact_of(row.scenario)
    limit = config.maxSummaryTokens if config is not None else DEFAULT_MAX_SUMMARY_TOKENS
    clean = check_summary(summary, str(row.summary.get("format")), limit)
    return _replace(row, clean, expected_version, "edit", by, {"edited_by": by}, request, user)


def delete(
    row: CompactCheckpoint, expected_version: int, *, by: str, request=None, user=None
) -> CompactCheckpoint:
    """Invalidate ``row`` (reason ``deleted_by_operator``): the next turn reads the whole
    history and compacts it again when due."""
    with transaction.atomic():
        if row.version != expected_version or not store.invalidate(
            row.conversation_id, row.scenario_id, row.version, DELETED
        ):
            raise _conflict(row, expected_version)
        _audit("delete", row, row, by, request, user)
    row.refresh_from_db()
    return row


def regenerate(
    row: CompactCheckpoint, expected_version: int, *, by: str, request=None, user=None
) -> CompactCheckpoint:
    """Ask the scenario's compactor again over the messages ``row`` covers and save its
    summary as the next version."""
    _head(row, expected_version, lock=False)
    config = reads.compact_of(row.scenario)
    if config is None:
        raise CompactNotConfigured(message="the checkpoint's scenario has no compact config")
    ref = config.compactorModelConfigId
    model_config = model_configs_by_ref(row.tenant_id, [ref]).get(ref)
    if model_config is None:
        raise CompactNotConfigured(message=f"no model config {ref!r} for the compactor")
    conversation = row.conversation
    covered = reads.covered_messages(conversation, row)
    if covered is None:
        raise HistoryChanged(
            message="the messages this checkpoint covers changed; the next turn rebuilds it"
        )
    names = {"user": persona_for(conversation).name, "assistant": conversation.character.name}
    speakers = [(names[m.role], m.content) for m in covered]
    calls: list = []
    try:
        summary = async_to_sync(compact_model.ask)(
            row.tenant, model_config, config, conversation.character.name, speakers, call_ids=calls
        )
    except ModelError as exc:
        raise CompactorFailed(exc.code, f"the compactor failed: {exc.message}") from None
    except TimeoutError:
        raise CompactorFailed("model_timeout", "the compactor took too long") from None
    except protocol.SummaryInvalid as exc:
        raise CompactorFailed(message=f"the compactor's summary was refused: {exc}") from None
    details = compact_model.audit(config, regenerated_by=by, model_calls=calls)
    return _replace(row, summary, expected_version, "regenerate", by, details, request, user)


def _replace(row, summary: dict, expected: int, action: str, by: str, details: dict, request, user):
    """Save ``summary`` as the version after ``row`` (compared under the lock), audited."""
    with transaction.atomic():
        _head(row, expected, lock=True)
        checkpoint = store.as_checkpoint(row)
        successor = replace(checkpoint, version=row.version + 1, summary=summary, chain=row.version)
        saved = store.save(
            row.tenant_id,
            row.conversation_id,
            row.scenario_id,
            successor,
            expected=expected,
            audit=details,
        )
        _audit(action, row, saved, by, request, user)
    return saved


def _head(row: CompactCheckpoint, expected: int, *, lock: bool) -> None:
    """Raise :class:`CheckpointConflict` unless ``row`` is the newest version, active, and
    the one the operator saw."""
    rows = reads.versions_of(row.conversation_id, row.scenario_id)
    top = (rows.select_for_update() if lock else rows).first()
    if top is None or top.version != row.version or top.version != expected:
        raise _conflict(row, expected, top)
    if top.status != "active":
        raise CheckpointConflict(
            f"version {top.version} is {top.status}; the next turn rebuilds the summary",
            current=top.version,
            expected=expected,
        )


def _conflict(row, expected: int, top=None) -> CheckpointConflict:
    if top is None:
        top = store.newest(row.conversation_id, row.scenario_id)
    current = top.version if top is not None else 0
    if top is not None and top.version == row.version == expected:
        message = f"version {current} is {top.status}, not active"
    elif current != row.version:
        message = f"version {row.version} is not the newest checkpoint; {current} is"
    else:
        message = f"the newest checkpoint is {current}, not {expected}"
    return CheckpointConflict(message, current=current, expected=expected)


def _audit(action: str, row, result, by: str, request, user) -> None:
    audit.record(
        AuditAction.COMPACT_CHECKPOINT,
        request=request,
        user=user,
        username=by,
        tenant=row.tenant,
        details={
            "conversation": str(row.conversation_id),
            "scenario": str(row.scenario_id),
            "action": action,
            "version": row.version,
            "new_version": result.version,
        },
    )
