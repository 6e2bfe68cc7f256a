"""Chat pictures of the front tool loop (seed 002 lines 1191–1276, ``docs/images.md``):
the pictures a reply scheduled become image slots of its stored message once the turn has
ended, each drawn in Celery.

1. ``reserve`` (the plug-in's ``settle`` phase, after ``turn.completed``: the text first):
   each picture's slot is written ``pending`` on the stored assistant message, with the
   segment's own prompt for now, and ``image.scheduled {turn_id, message_id, index}`` goes to
   the conversation's sockets; then ``roleplay.draw_chat_picture`` is queued.
2. ``draw`` (that task): the image prompt producer (the controller's model config, with
   ``imagePromptProducerPrompt``, else the shipped one; ``ModelCall.purpose =
   "image_prompt"``) writes one ``<image_prompt>`` block from the player's request, the
   segment, the picture's number, the character's appearance and the conversation's visual
   world (``world``: read once, with the turn's first picture); a failure falls back to a
   block in the segment, else its text (``engine.image_prompt.choose_prompt``), and the
   degradation is kept in the slot's evidence. Then the image backend draws the slot
   (``images.services.slots.draw_slot``: ``ready``, ``blocked`` or ``failed``).
   Once per turn with pictures, ``roleplay.update_visual_world`` rewrites the visual world
   from the reply (``world.update_after_turn``), so the next pictures keep faces and places.
3. ``announce_slot`` (a receiver of ``images.signals.slot_changed``): a slot's final state
   goes to the conversation's sockets as ``image.ready {message_id, index, url,
   thumbnail_url}`` (signed, expiring links), ``image.blocked`` or ``image.failed {code}``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from asgiref.sync import async_to_sync

from console import task_send
from console.db import run_db
from images import signing
from images.models import ImageSlot, SlotStatus
from images.services import slots
from roleplay.frontloop import world
from roleplay.frontloop.engine import world as rules
from roleplay.frontloop.engine.image_prompt import choose_prompt
from roleplay.frontloop.engine.prompt import DEFAULT_IMAGE_PROMPT_PRODUCER_PROMPT
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest
from roleplay.turns import hub

log = logging.getLogger(__name__)
PRODUCER_PURPOSE = "image_prompt"
PRODUCER_MAX_TOKENS = 400
FINAL_EVENTS = {
    SlotStatus.READY: "image.ready",
    SlotStatus.BLOCKED: "image.blocked",
    SlotStatus.FAILED: "image.failed",
}


def reserve(ctx, wanted: list[str], director) -> list[dict[str, Any]]:
    """Write a slot for each picture of ``wanted`` (the pictured segments' texts, in image
    order) on the turn's stored message and queue each drawing; the ``image.scheduled``
    events to send."""
    turn, scenario = ctx.turn, ctx.scenario
    config = scenario.image_config if scenario is not None else None
    if config is None or turn.assistant_message_id is None:
        return []
    revision, state = world.world_of(ctx.conversation)  # prepared with the first picture
    visual_state = rules.describe(state)
    events = []
    for index, text in enumerate(wanted):
        first = choose_prompt(None, text, producer_error="not written yet")
        if first.prompt is None:
            continue
        slot = slots.reserve_slot(
            turn.tenant, turn.conversation_id, turn.assistant_message_id, index,
            first.prompt.block(), config, session_id=ctx.conversation.session_id, enqueue=False,
        )  # fmt: skip
        task_send.named("roleplay.draw_chat_picture").delay(
            str(slot.pk),
            {
                "player_input": ctx.user_input or "",
                "segment": text,
                "index": index,
                "controller": director.model_config_id,
                "producer_prompt": director.image_prompt_producer_prompt,
                "appearance": ctx.character.description[:4000],
                "turn_id": str(turn.id),
                "visual_state": visual_state,
                "world_revision": revision,
            },
        )
        events.append(
            {
                "type": "image.scheduled",
                "turn_id": str(turn.id),
                "message_id": str(turn.assistant_message_id),
                "index": index,
            }
        )
    if events:
        task_send.named("roleplay.update_visual_world").delay(
            str(ctx.conversation.pk), str(turn.id), ctx.reply or "", director.model_config_id
        )
    return events


def draw(slot_id: str, request: dict[str, Any]) -> str:
    """Write the slot's prompt with the producer, then draw it; the slot's final status."""
    slot = ImageSlot.objects.filter(pk=slot_id).select_related("tenant").first()
    if slot is None or slot.status != SlotStatus.PENDING:
        return "gone"
    choice = _produce(slot, request)
    if choice.prompt is not None:
        slots.reprompt(slot_id, choice.prompt.block(), aspect=_ratio(choice.prompt.aspect))
    slots.note_prompt(slot_id, choice.to_json())  # kept beside the backend's evidence
    drawn = slots.draw_slot(slot_id)
    return drawn.status if drawn is not None else "gone"


def _ratio(aspect: str | None) -> tuple[int, int] | None:
    """``"16:9"`` as (16, 9); None for none."""
    if not aspect or ":" not in aspect:
        return None
    w, _, h = aspect.partition(":")
    return (int(w), int(h)) if w.strip().isdigit() and h.strip().isdigit() else None


def _produce(slot: ImageSlot, request: dict[str, Any]):
    """The producer's block for ``slot`` (or the fallback, with why)."""
    segment = str(request.get("segment") or "")
    refs = model_configs_by_ref(slot.tenant_id, [request.get("controller")])
    config = refs.get(request.get("controller"))
    system = request.get("producer_prompt") or DEFAULT_IMAGE_PROMPT_PRODUCER_PROMPT
    user = (
        f"<player_request>{request.get('player_input', '')}</player_request>\n"
        f"<segment>{segment}</segment>\n<image_number>{int(request.get('index', 0)) + 1}"
        f"</image_number>\n<appearance>{request.get('appearance', '')}</appearance>\n"
        f"<visual_state>{request.get('visual_state', '')}</visual_state>"
    )
    gateway = Gateway(slot.tenant, config, PRODUCER_PURPOSE, turn_id=request.get("turn_id"),
                      run_db=run_db)  # fmt: skip
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    try:
        result = asyncio.run(
            gateway.complete(ModelRequest(messages, max_tokens=PRODUCER_MAX_TOKENS))
        )
    except ModelError as exc:
        return choose_prompt(None, segment, producer_error=exc.code)
    return choose_prompt(result.content, segment)


def announce_slot(sender, *, slot, status, **_) -> None:
    """A slot's final state to its conversation's sockets (module doc)."""
    kind = FINAL_EVENTS.get(status)
    if kind is None:
        return
    event: dict[str, Any] = {
        "type": kind,
        "message_id": str(slot.message_id),
        "index": slot.index,
    }
    if status == SlotStatus.READY:
        event["url"] = signing.url_for(slot.tenant_id, slot.file)
        event["thumbnail_url"] = signing.url_for(slot.tenant_id, slot.thumbnail or slot.file)
    else:
        event["code"] = slot.code
    try:
        async_to_sync(hub.announce)(str(slot.conversation_id), event)
    except Exception:  # a socket layer in trouble costs the event, never the picture
        log.warning("could not announce image slot %s", slot.pk, exc_info=True)
