"""Writes of moderation: the policy, the checks of a turn's input and reply, reports, and the
operators' actions on a case (each audited), suspensions and bans.

A blocked input keeps nothing the player sent but a redacted record (category, hash, a
short excerpt that keeps no word whole: ``engine.rules.redacted``). A hidden reply is kept,
out of the history, for review (``memory.services.hide_message``).
"""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from console import audit
from console.failures import Invalid
from console.models import AuditAction
from memory import services as message_store
from memory.models import Message
from roleplay.characters.services.characters import update_character
from roleplay.models import Character, Visibility

from . import endpoint, notices, selectors
from .engine import rules as engine
from .errors import ActionInvalid, InputBlocked, PlayerSuspended, ReportInvalid
from .models import Case, CaseSource, CaseStatus, ModerationPolicy, Sanction, SanctionKind

MAX_REASON = 1000
MAX_HOURS = 24 * 365 * 5
ACTIONS = ("dismiss", "hide_message", "suspend", "ban", "lift", "unlist_character")


def set_policy(tenant, *, by=None, request=None, **fields) -> ModerationPolicy:
    """Change the tenant's policy (``enabled``, ``check_input``, ``check_reply``,
    ``show_nsfw``, ``model_config``, ``rules``); bad rules are 422 ``moderation_rules_invalid``."""
    if "rules" in fields:
        try:
            fields["rules"] = engine.parse(fields["rules"]).model_dump()
        except ValidationError as exc:
            raise Invalid("moderation_rules_invalid", _first_error(exc)) from exc
    config = fields.get("model_config")
    if config is not None and config.tenant_id != tenant.pk:
        raise Invalid("moderation_rules_invalid", "no such model config")
    row, _ = ModerationPolicy.objects.update_or_create(tenant=tenant, defaults=fields)
    changed = {k: (str(v.pk) if hasattr(v, "pk") else v) for k, v in fields.items() if k != "rules"}
    _audit(AuditAction.MODERATION_POLICY, tenant, by, request, changed)
    return row


def _audit(action: str, tenant, by, request, details: dict) -> None:
    """Record ``action``; ``by`` is the console user, or an API token's name (a string)."""
    audit.record_by(action, by, tenant=tenant, request=request, details=details)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def judge(policy: ModerationPolicy, text: str) -> engine.Decision:
    """The policy's decision on ``text``: its lists, then its endpoint if it has one."""
    rules = engine.parse(policy.rules)
    listed = engine.matched(text, rules)
    flagged = endpoint.flagged(policy.model_config, text) if policy.model_config_id else []
    return engine.decide(rules, listed, flagged)


def admit(conversation, content: str) -> engine.Decision | None:
    """A turn's admission: a suspended or banned player is refused (423
    ``player_suspended``); a message the policy blocks is refused (422 ``input_blocked``)
    with a redacted record, and one it warns of is recorded, let through and returned (the
    player is told: ``plugin.warning``); None when nothing is to be said."""
    sanction, checks_input = selectors.admission(conversation.player_id, conversation.tenant_id)
    if sanction is not None:
        raise PlayerSuspended(message=selectors.describe(sanction),
                              details={"kind": sanction.kind})  # fmt: skip
    if not content or not checks_input:
        return None
    policy = selectors.policy(conversation.tenant_id)
    if policy is None or not policy.check_input:
        return None
    decision = judge(policy, content)
    if decision.action == "allow":
        return None
    blocked = engine.blocks_input(decision)
    _flag(conversation, CaseSource.INPUT, decision, content, keep_excerpt=True,
          action="block_input" if blocked else "warn")  # fmt: skip
    if blocked:
        raise InputBlocked(
            message="this message is not allowed here",
            details={"category": decision.category},
        )
    return decision


def check_reply(conversation, message_id, text: str) -> engine.Decision | None:
    """A committed reply judged by the policy (None when it checks no replies): hidden
    (kept out of the history and the player's view) or recorded, per its action."""
    policy = selectors.policy(conversation.tenant_id)
    if policy is None or not policy.check_reply or not text:
        return None
    decision = judge(policy, text)
    if decision.action == "allow":
        return decision
    hidden = engine.hides_reply(decision)
    with transaction.atomic():
        if hidden:
            message = Message.objects.filter(
                tenant_id=conversation.tenant_id, pk=message_id
            ).first()
            if message is not None:
                message_store.hide_message(message, {"by": "policy", "category": decision.category})
        _flag(conversation, CaseSource.REPLY, decision, text, message_id=message_id,
              action="hide_reply" if hidden else "warn")  # fmt: skip
    return decision


def _flag(conversation, source, decision, text, *, action, message_id=None, keep_excerpt=False):
    return Case.objects.create(
        tenant_id=conversation.tenant_id,
        source=source,
        category=decision.category,
        categories=list(decision.categories),
        action=action,
        excerpt=engine.redacted(text) if keep_excerpt else "",
        content_hash=engine.content_hash(text),
        player_id=conversation.player_id,
        conversation=conversation,
        message_id=message_id,
        character_id=conversation.character_id,
    )


def report(reporter, *, reason: str, message_id=None, character_id=None) -> Case:
    """A player's report of a message of their own conversation or of a character they may
    see (another's is a 404 before this: ``selectors.reportable_*``)."""
    reason = (reason or "").strip()
    if not reason or len(reason) > MAX_REASON:
        raise ReportInvalid(message=f"say why, in 1 to {MAX_REASON} characters")
    if (message_id is None) == (character_id is None):
        raise ReportInvalid(message="report one message or one character")
    fields: dict = {"tenant_id": reporter.tenant_id, "source": CaseSource.REPORT,
                    "reason": reason, "reporter": reporter}  # fmt: skip
    if message_id is not None:
        found = selectors.reportable_message(reporter, message_id)
        if found is None:
            raise ReportInvalid("not_found", "no such message")
        message, conversation = found
        fields |= {"message_id": message.pk, "conversation": conversation,
                   "character_id": conversation.character_id,
                   "content_hash": engine.content_hash(message.content)}  # fmt: skip
        fields["player_id"] = conversation.player_id if message.role == "user" else None
    else:
        character = selectors.reportable_character(reporter, character_id)
        if character is None:
            raise ReportInvalid("not_found", "no such character")
        fields["character"] = character
    return Case.objects.create(**fields)


@transaction.atomic
def act(case: Case, action: str, *, by=None, request=None, reason: str = "", hours=None) -> Case:
    """An operator's action on a case, audited: ``dismiss``; ``hide_message``;
    ``suspend`` (for ``hours``) or ``ban`` the case's player; ``lift`` their sanction;
    ``unlist_character``. Anything but ``dismiss`` closes the case as actioned."""
    if action not in ACTIONS:
        raise ActionInvalid(message=f"action must be one of {', '.join(ACTIONS)}")
    case = Case.objects.select_for_update().get(pk=case.pk)
    details = {"case": str(case.pk), "reason": reason[:MAX_REASON]}
    if action == "dismiss":
        _audit(AuditAction.MODERATION_DISMISSED, case.tenant, by, request, details)
    elif action == "hide_message":
        _hide(case, by, request, details)
    elif action in ("suspend", "ban"):
        if case.player_id is None:
            raise ActionInvalid(message="this case names no player")
        sanction(case.player, action, reason=reason, hours=hours, by=by, request=request,
                 case=case)  # fmt: skip
    elif action == "lift":
        if case.player_id is None:
            raise ActionInvalid(message="this case names no player")
        lift(case.player, by=by, request=request)
    else:
        _unlist(case, by, request, details)
    case.status = CaseStatus.DISMISSED if action == "dismiss" else CaseStatus.ACTIONED
    user = None if isinstance(by, str) else by
    case.resolution, case.resolved_by, case.resolved_at = action, user, timezone.now()
    case.save(update_fields=["status", "resolution", "resolved_by", "resolved_at"])
    return case


def _hide(case: Case, by, request, details: dict) -> None:
    message = None
    if case.message_id is not None:
        message = Message.objects.filter(tenant_id=case.tenant_id, pk=case.message_id).first()
    if message is None:
        raise ActionInvalid(message="this case has no message to hide")
    message_store.hide_message(message, {"by": "operator", "case": str(case.pk)})
    _audit(
        AuditAction.MODERATION_HIDDEN,
        case.tenant,
        by,
        request,
        {**details, "message": str(message.pk)},
    )


def _unlist(case: Case, by, request, details: dict) -> None:
    if case.character_id is None:
        raise ActionInvalid(message="this case names no character")
    character = Character.objects.get(pk=case.character_id)
    if character.visibility == Visibility.LISTED:
        update_character(character, visibility=Visibility.UNLISTED)
    _audit(
        AuditAction.MODERATION_UNLISTED,
        case.tenant,
        by,
        request,
        {**details, "character": str(character.pk)},
    )


def sanction(player, kind: str, *, reason: str, hours=None, by=None, request=None, case=None):
    """Suspend ``player`` for ``hours`` (1 to five years of hours) or ban them; audited. Their
    open chat sockets close once this commits (``notices``), their turns are refused and
    their ``/app/`` pages say why."""
    reason = (reason or "").strip()
    if not reason or len(reason) > MAX_REASON:
        raise ActionInvalid(message=f"give a reason of 1 to {MAX_REASON} characters")
    until = None
    if kind == SanctionKind.SUSPEND:
        if isinstance(hours, bool) or not isinstance(hours, int) or not 0 < hours <= MAX_HOURS:
            raise ActionInvalid(message=f"a suspension lasts 1 to {MAX_HOURS} hours")
        until = timezone.now() + timedelta(hours=hours)
    elif kind != SanctionKind.BAN:
        raise ActionInvalid(message="a sanction is suspend or ban")
    row = Sanction.objects.create(
        tenant_id=player.tenant_id, player=player, kind=kind, reason=reason, until=until,
        case=case, created_by=None if isinstance(by, str) else by,
    )  # fmt: skip
    details = {"player": str(player.pk), "kind": kind, "reason": reason,
               "until": until.isoformat() if until else None}  # fmt: skip
    _audit(AuditAction.MODERATION_SANCTION, player.tenant, by, request, details)
    words = selectors.describe(row)
    transaction.on_commit(lambda: notices.close_sockets(player.pk, words))
    return row


def lift(player, *, by=None, request=None) -> int:
    """End the player's sanctions in force; audited."""
    lifted = Sanction.objects.filter(player=player, lifted_at__isnull=True).update(
        lifted_at=timezone.now()
    )
    _audit(
        AuditAction.MODERATION_LIFTED,
        player.tenant,
        by,
        request,
        {"player": str(player.pk), "lifted": lifted},
    )
    return lifted
