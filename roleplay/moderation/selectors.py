"""Reads of moderation: the policy in force, a player's sanction, what ratings a player may
see, the queue and a case's context."""

from __future__ import annotations

from functools import cache

from django.db.models import Q
from django.utils import timezone

from console.rows import prepared
from console.scoping import is_uuid
from memory.models import Message
from roleplay.models import Character, ContentRating, Conversation

from .models import Case, CaseStatus, ModerationPolicy, Sanction

CONTEXT_AROUND = 3
QUEUE_SHOWN = 200


def policy(tenant_id) -> ModerationPolicy | None:
    """The tenant's policy if it moderates anything, else None."""
    row = (
        ModerationPolicy.objects.select_related("model_config")
        .filter(tenant_id=tenant_id, enabled=True)
        .first()
    )
    return row


def settings_of(tenant) -> ModerationPolicy:
    """The tenant's policy row as the console edits it (unsaved defaults when none)."""
    return ModerationPolicy.objects.filter(tenant=tenant).first() or ModerationPolicy(tenant=tenant)


def sanction_of(player_id) -> Sanction | None:
    """The player's sanction in force (a ban before a suspension, then the newest), or
    None."""
    live = Q(until__isnull=True) | Q(until__gt=timezone.now())
    rows = Sanction.objects.filter(live, player_id=player_id, lifted_at__isnull=True)
    return rows.order_by("kind", "-created_at").first()  # "ban" sorts before "suspend"


def admission(player_id, tenant_id) -> tuple[Sanction | None, bool]:
    """A turn's admission in one statement (every turn pays it): the player's sanction in
    force as :func:`sanction_of` finds it, and whether the tenant's policy judges inputs."""
    with prepared(_admission_sql(), [tenant_id, player_id, tenant_id]) as cursor:
        sanction_id, checks_input = cursor.fetchone()
    sanction = Sanction.objects.get(pk=sanction_id) if sanction_id else None
    return sanction, bool(checks_input)


@cache
def _admission_sql() -> str:
    sanctions, policies = Sanction._meta.db_table, ModerationPolicy._meta.db_table
    return f"""
        SELECT (SELECT s.id FROM {sanctions} s WHERE s.tenant_id = %s AND s.player_id = %s
                    AND s.lifted_at IS NULL AND (s.until IS NULL OR s.until > now())
                    ORDER BY s.kind, s.created_at DESC LIMIT 1),
               EXISTS (SELECT 1 FROM {policies} m WHERE m.tenant_id = %s
                    AND m.enabled AND m.check_input)
    """


def describe(sanction: Sanction) -> str:
    """The sanction in words, for the player."""
    if sanction.kind == "ban":
        return f"Your account is banned: {sanction.reason}"
    until = timezone.localtime(sanction.until).strftime("%Y-%m-%d %H:%M %Z")
    return f"Your account is suspended until {until}: {sanction.reason}"


def suspension_reason(account) -> str:
    """``roleplay.accounts.blockers.BLOCKERS``: why a suspended or banned account may not
    play ("" when it may)."""
    sanction = sanction_of(account.player_id)
    return describe(sanction) if sanction else ""


def visible_ratings(account) -> set[str]:
    """The content ratings of listed characters ``account`` may be shown: ``sfw`` always;
    ``nsfw`` only once the player confirmed their age, and only where the tenant's policy
    shows adult characters at all (``ModerationPolicy.show_nsfw``, on by default)."""
    ratings = {ContentRating.SFW.value}
    if account is None or account.age_confirmed_at is None:
        return ratings
    row = ModerationPolicy.objects.filter(tenant_id=account.tenant_id).only("show_nsfw").first()
    if row is None or row.show_nsfw:
        ratings.add(ContentRating.NSFW.value)
    return ratings


def queue(tenant, status: str = CaseStatus.OPEN):
    rows = Case.objects.filter(tenant=tenant)
    if status:
        rows = rows.filter(status=status)
    return rows.select_related("player", "reporter", "character", "conversation").order_by(
        "-created_at"
    )


def context_of(case: Case) -> list[Message]:
    """The case's message and the ones around it in its conversation, oldest first."""
    if case.conversation_id is None or case.message_id is None:
        return []
    session = str(case.conversation_id)
    rows = Message.objects.filter(tenant_id=case.tenant_id, session_id=session)
    target = rows.filter(pk=case.message_id).values_list("ts", flat=True).first()
    if target is None:
        return []
    before = list(rows.filter(ts__lt=target).order_by("-ts")[:CONTEXT_AROUND])
    after = rows.filter(ts__gte=target).order_by("ts")[: CONTEXT_AROUND + 1]
    return [*reversed(before), *after]


def reportable_message(player, message_id) -> tuple[Message, Conversation] | None:
    """A message of one of ``player``'s own conversations, with it; None for any other."""
    if not is_uuid(str(message_id)):
        return None
    message = Message.objects.filter(tenant_id=player.tenant_id, pk=message_id).first()
    if message is None or not is_uuid(message.session_id):
        return None
    conversation = Conversation.objects.filter(
        tenant_id=player.tenant_id, player=player, pk=message.session_id
    ).first()
    return (message, conversation) if conversation else None


def reportable_character(player, character_id) -> Character | None:
    """A character ``player`` may see: listed or unlisted, or their own."""
    if not is_uuid(str(character_id)):
        return None
    return (
        Character.objects.filter(tenant_id=player.tenant_id, pk=character_id)
        .filter(Q(visibility__in=("listed", "unlisted")) | Q(owner_player=player))
        .first()
    )
