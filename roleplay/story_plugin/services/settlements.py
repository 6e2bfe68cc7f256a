"""Events waiting for their settlement, retried without waiting for the player (beyond the
seed, whose retries ride on the next request): a periodic task finds stories whose queue is
not empty and whose conversation has no turn running, and retries each queue
(``coordinator.settle_waiting``) with the conversation's stored messages, then saves by
compare-and-set (outcome ``settled_in_background``); a turn that moved the story meanwhile
wins and nothing is written. The retry counts at the stored watermark, so it never hastens
the quarantine rule, which counts message positions."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync

from memory.models import Message
from roleplay.characters.selectors import greeting_for
from roleplay.models import Turn, TurnStatus
from roleplay.scenarios.selectors import story_config
from roleplay.story_plugin.model import StoryModels
from story import services
from story.engine import coordinator
from story.engine.policy import parse_policy
from story.engine.source import compile_source
from story.errors import StaleWrite, TooLarge
from story.models import StoryHead

logger = logging.getLogger(__name__)
BATCH = 50


def sweep() -> int:
    """Retry every waiting queue (at most ``BATCH`` stories a run); how many were saved."""
    heads = (
        StoryHead.objects.filter(envelope__unresolved__0__isnull=False)
        .select_related("conversation__character", "scenario", "tenant")
        .order_by("updated_at")[:BATCH]
    )
    saved = 0
    for head in heads:
        try:
            saved += retry(head)
        except Exception:
            logger.exception("retrying the settlements of story %s failed", head.pk)
    return saved


def retry(head: StoryHead) -> int:
    """1 when the retry moved the story and was saved, else 0."""
    conversation = head.conversation
    config = story_config(head.scenario)
    if (
        config is None
        or Turn.objects.filter(conversation=conversation, status=TurnStatus.RUNNING).exists()
    ):
        return 0
    envelope = head.envelope
    ids = {
        e["message_id"]
        for event in envelope.get("unresolved") or []
        for e in event.get("evidence") or []
    }
    rows = Message.objects.filter(tenant_id=head.tenant_id, pk__in=ids).values_list(
        "pk", "role", "content"
    )
    character = conversation.character
    world_policy, narrative_policy = parse_policy(config.policy)
    request = coordinator.Request(
        kind="chat",
        turn_id="",
        character_id=str(character.pk),
        character_name=character.name,
        history=[coordinator.HistoryMessage(str(pk), role, text) for pk, role, text in rows],
        user_text=None,
        user_message_id=None,
        assistant_message_id="",
        source_position=int(envelope.get("sourceWatermark") or 0),
        source=compile_source(
            character.name, character.description, greeting_for(conversation), []
        ),
        seed=config.seed,
        world_policy=world_policy,
        narrative_policy=narrative_policy,
    )
    models = StoryModels(head.tenant, config)
    prep = async_to_sync(coordinator.settle_waiting)(envelope, request, models)
    moved = [e for e in prep.events if e["status"] != "unknown"] or prep.quarantines
    if not moved or prep.envelope is None:
        return 0
    try:
        services.save(
            services.Save.over(
                head,
                envelope=prep.envelope,
                status=head.status,
                outcome="settled_in_background",
                max_bytes=config.maxStateBytes,
                source_position=request.source_position,
                events=prep.events,
                quarantines=prep.quarantines,
            )
        )
    except (StaleWrite, TooLarge) as exc:
        logger.info("background settlement of story %s not saved: %s", head.pk, exc.code)
        return 0
    return 1
