"""Pre-compaction (beyond seed 002, Compact): the next checkpoint made in the background.

After a turn whose next prompt will pass the trigger (``compact_ahead``), the Celery task
``roleplay.prepare_compaction`` runs :func:`prepare`: it reads the conversation as the next
turn will (the newest checkpoint, checked the same way, and the history as far as it is
written), folds the same closed groups that turn would fold with the scenario's compactor,
and keeps the result as the conversation's prepared checkpoint (``CompactPreparation``)
naming the version it extends. That turn adopts it instead of calling the compactor, only
if the version is still the newest, its covered messages are unchanged and the prompt then
falls below the trigger (``compact.plugin``); else it compacts as it would have.

The next player message is not written yet, so the compactor does not see it (it is
context only anyway). A second delivery that would fold the same messages onto the same
version does nothing; a version saved meanwhile (a turn, an operator) makes the result
stale and nothing is written.
"""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync

from roleplay.compact import model as compact_model
from roleplay.compact.engine import checkpoint as cp
from roleplay.compact.engine import groups as grouping
from roleplay.compact.engine import protocol
from roleplay.compact.services import checkpoints as store
from roleplay.llm.errors import ModelError
from roleplay.models import Conversation
from roleplay.players.selectors import persona_for
from roleplay.scenarios.selectors import compact_config, scenario_for
from roleplay.turns.context import next_chat_history

logger = logging.getLogger(__name__)


def prepare(conversation_id: str, scenario_id: str, turn_id: str | None = None) -> str:
    """Prepare the conversation's next checkpoint; what happened (``prepared``,
    ``unchanged``, ``stale``, ``nothing_to_compress``, ``compactor_failed``, ``off``...)."""
    conversation = (
        Conversation.objects.select_related("tenant", "character")
        .filter(pk=conversation_id)
        .first()
    )
    if conversation is None:
        return "gone"
    scenario = scenario_for(conversation)
    if scenario is None or str(scenario.pk) != str(scenario_id):
        return "scenario_changed"
    config = compact_config(scenario)
    if config is None:
        return "off"
    whole = next_chat_history(conversation)
    config_fp = compact_model.config_fingerprint(conversation.character, config)
    row = store.newest(conversation.pk, scenario.pk)
    base = row.version if row else 0
    current = None
    if row is not None and row.status == "active":
        checkpoint = store.as_checkpoint(row)
        verdict = compact_model.verify(checkpoint, whole, config, config_fp)
        current = checkpoint if verdict.ok else None
    uncovered = cp.after(current, whole) if current else whole
    groups, _kept = grouping.split_groups(
        uncovered, config.boundaryMode, config.keepLastCanonicalGroups
    )
    if not groups:
        return "nothing_to_compress"
    chain = current.version if current else None
    ready = store.prepared(conversation.pk, scenario.pk, base)
    if ready is not None and ready.last_id == groups[-1].last_id and ready.chain == chain:
        return "unchanged"
    names = {"user": persona_for(conversation).name, "assistant": conversation.character.name}
    calls: list = []

    async def ask_for(messages: list, chained: bool, deadline: float) -> dict:
        return await compact_model.ask(
            conversation.tenant,
            model_config,
            config,
            conversation.character.name,
            [(names[m.role], m.content) for m in messages],
            earlier=cp.summary_text(current.summary) if current and chained else "",
            turn_id=turn_id,
            call_ids=calls,
            deadline=deadline,
        )

    try:
        model_config = compact_model.compactor_config(conversation.tenant_id, config)
        done = async_to_sync(compact_model.fold)(config, groups, ask_for)
    except (ModelError, TimeoutError, protocol.SummaryInvalid) as exc:
        logger.warning("pre-compaction of %s failed: %s", conversation_id, exc)
        return "compactor_failed"
    successor = cp.successor(
        current if done.chained else None,
        whole,
        done.folded,
        done.summary,
        config_fp=config_fp,
        expected=base,
    )
    audit = compact_model.audit(config, after_turn=turn_id, model_calls=calls)
    saved = store.prepare(
        conversation.tenant_id, conversation.pk, scenario.pk, successor, base=base, audit=audit
    )
    return "prepared" if saved else "stale"
