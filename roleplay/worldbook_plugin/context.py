"""Worldbook selection for a chat turn: resolve every lorebook scope's bindings once, select
with the turn's input, its public scene and recent history (turn id as seed) and the turn's
state (``worldbook_state``), and hand placed blocks to the Actor.

The turn plug-in ``worldbook`` (:class:`WorldbookPlugin`, a ``read`` hook, the first of the
turn). The books are those of the character (the binding ``prompt_id`` is its id), the
tenant's global ones, the scenario's, the conversation's and the persona's, read in one
statement and ordered by SillyTavern's ``world_info_character_strategy``
(``worldbook.engine.scopes``; docs/worldbook.md, "Lorebook scopes"). The scenario's
``worldbook`` object chooses the strategy, the token budget and maybe the scope order
(``ctx.settings.worldbook``: ``roleplay.scenarios.worldbook_config``, ``hybrid`` and 2,400 by
default). The resolved revisions are kept in the turn trace, so everything generated for
this turn (including the gateway's retries) uses the same book revisions; the next turn
resolves again.
"""

from __future__ import annotations

from console.failures import NotFound
from console.scoping import LOOKUP_MISSES
from memory.selectors import count_chat_messages
from roleplay.llm.tokenizers.counters import counter_for, worldbook_tokenizer
from roleplay.models import ModelConfig
from roleplay.regex_scripts.turns import lore_block, turn_scripts
from roleplay.turns.plugin import PluginFailed, TurnPlugin
from roleplay.worldbook_plugin import state as worldbook_state
from story import selectors as story_reads
from worldbook.engine import scopes
from worldbook.engine.activation import CONSTANT
from worldbook.engine.gc_pause import paused_gc
from worldbook.engine.schema import SelectRequest
from worldbook.errors import WorldbookError
from worldbook.indexing import embedding_version
from worldbook.retrieval import recording, replay, select_result
from worldbook.selectors import scoped_revisions

HISTORY_MESSAGES = 20
# The worldbook's reason for an entry whose position this turn's layout lacks, and the
# name the turn trace gives it (it is reported, never dropped silently).
PLACEMENT_UNSUPPORTED = "placement_unsupported"
POSITION_UNAVAILABLE = "position_unavailable"
MAX_HISTORY_CHARS = 16_000


class WorldbookTurnError(PluginFailed):
    """The worldbook could not select: the turn fails with the worldbook's code."""


class WorldbookPlugin(TurnPlugin):
    name = "worldbook"

    def read(self, ctx, conversation) -> None:
        apply(ctx, conversation)


PLUGIN = WorldbookPlugin()


def apply(ctx, conversation) -> None:
    tenant = conversation.tenant
    character = conversation.character
    config = ctx.settings.worldbook
    try:
        chosen, strategy = turn_books(ctx, conversation, config.characterStrategy)
    except WorldbookError as exc:
        raise WorldbookTurnError(exc.code, exc.message) from exc
    if not chosen.books:
        return
    bound = [book.item for book, _tier in chosen.books]
    agent = ctx.agent_state
    agent_text = agent.state if agent is not None else None
    message_index = count_chat_messages(tenant, conversation.session_id)
    request = SelectRequest(
        books=[{**book.item.ref(), "tier": tier} for book, tier in chosen.books],
        # A continue turn has no new input: the reply it goes on from is what it is about.
        query=worldbook_state.query(
            ctx.user_input or ctx.continuing or "", worldbook_state.scene_text(agent_text)
        ),
        history=[
            {"role": m.role, "content": m.content[:MAX_HISTORY_CHARS]}
            for m in ctx.history[-HISTORY_MESSAGES:]
        ],
        state=turn_state(ctx, agent),
        audience="actor",
        strategy=config.strategy,
        token_budget=config.tokenBudget,
        seed=str(ctx.turn.id),
        template_vars={"char": character.name, "user": ctx.user_name},
        # Exactly the positions this turn's prompt layout has (preset, examples, author's
        # note, outlets), so the worldbook never selects what cannot be placed.
        placement_capabilities=list(ctx.placement_capabilities()),
        conversation_id=conversation.session_id,
        message_index=message_index,
    )
    # The selection's working objects (thousands over 20 full books) die before the
    # collector runs again, so it never has to walk them (see engine.gc_pause).
    with paused_gc():
        scope_of = {book.book_id: book.scope for book, _tier in chosen.books}
        _select_into(ctx, tenant, request, bound, scope_of)
    ctx.trace["worldbook"]["scopes"] = scope_trace(chosen, strategy)


def turn_targets(ctx, conversation) -> list[tuple[str, str]]:
    """The (scope, prompt id) pairs this turn meets: its character, the tenant, its
    scenario, the conversation itself and the persona the player plays."""
    targets = [("prompt", str(conversation.character.id)), ("global", "")]
    if ctx.scenario is not None:
        targets.append(("scenario", str(ctx.scenario.pk)))
    targets.append(("chat", conversation.session_id))
    if ctx.persona.persona_id is not None:
        targets.append(("persona", ctx.persona.persona_id))
    return targets


def turn_books(ctx, conversation, scenario_strategy: str | None) -> tuple[scopes.Chosen, str]:
    """Every scope's books this turn reads, in SillyTavern's order for the strategy in
    force (the scenario's, else the tenant's, else ``character_first``), at most 20 of
    them: one statement (``scoped_revisions``)."""
    read = scoped_revisions(
        conversation.tenant, turn_targets(ctx, conversation), embedding_version()
    )
    strategy = scopes.strategy_of(scenario_strategy, read.tenant_strategy)
    return scopes.choose(read.books, strategy), strategy


def scope_trace(chosen: scopes.Chosen, strategy: str) -> dict:
    """The trace's ``scopes``: the strategy, each book read with its scope and tier, and any
    book cut past the limit."""
    return {
        "strategy": strategy,
        "books": [
            {"book_id": book.book_id, "scope": book.scope, "tier": tier}
            for book, tier in chosen.books
        ],
        "cut": [{"book_id": book.book_id, "scope": book.scope} for book in chosen.cut],
    }


def turn_state(ctx, agent) -> dict:
    """The ``state`` the entries' ``conditions`` read (``worldbook_state.turn_state``): Agent
    V2's state read with the conversation, the Story in force when the scenario runs Story
    (one read), and the turn's macro variables."""
    agent_text = agent.state if agent is not None else None
    agentic = (
        worldbook_state.agentic_view(agent.revision, agent_text)
        if agent is not None and agent_text is not None
        else None
    )
    story = None
    if ctx.settings.story is not None:
        revision, envelope = story_reads.read_for_turn(ctx.conversation.pk, ctx.scenario.pk)
        story = worldbook_state.story_view(revision, envelope)
    return worldbook_state.turn_state(agent_text, agentic, story, ctx.variables)


def _select_into(ctx, tenant, request: SelectRequest, bound, scope_of: dict[str, str]) -> None:
    """The selected blocks into the turn's, each but the constant entries marked
    ``per_turn`` (the selection changes with the conversation: the cache-aware layout
    places them after the history, ``prompting.stability``)."""
    try:
        result = select_result(
            tenant,
            request,
            record=ctx.record,
            bound=bound,
            tokenizer=worldbook_tokenizer(ctx.tokens),
        )
    except WorldbookError as exc:
        raise WorldbookTurnError(exc.code, exc.message) from exc
    scripts = turn_scripts(ctx)  # world-info regex scripts (``regex_scripts``)
    ctx.blocks.extend(
        lore_block(
            scripts,
            {key: b[key] for key in PLACEMENT_KEYS if b.get(key) is not None}
            | ({"per_turn": True} if b.get("reason") != CONSTANT else {}),
        )
        for b in result.blocks
    )
    ctx.trace["worldbook"] = {
        "books": [b.ref() for b in bound],
        "selected": [
            {
                "id": b["id"],
                "title": b["title"],
                "reason": b["reason"],
                "position": b["position"],
                "scope": scope_of[b["book_id"]],
            }
            for b in result.blocks
        ],
        "excluded": [
            {"entry_id": d["entry_id"], "reason": _reason(d["reason"]), "details": d["details"]}
            for d in result.excluded(100)
        ],
        "token_count": result.token_count,
        "tokenizer": ctx.tokens.name,
        "degraded": result.degraded,
        "selection_fingerprint": result.selection_fingerprint,
        # Every entry's decision is not kept (100,000 of them for 20 full books): the
        # conversation's turn API selects again from this, on demand.
        "replay": recording(request, result),
    }


PLACEMENT_KEYS = ("id", "position", "content", "order", "depth", "role", "outlet_name")


def selected_entries(ctx) -> list[dict]:
    """The worldbook entries this turn selected for the Actor, ``{id, title, content}`` in
    placement order: what other capabilities (Agent V2's background, Story's planner) read
    of the worldbook."""
    chosen = {
        s["id"]: s.get("title", "") for s in ctx.trace.get("worldbook", {}).get("selected", [])
    }
    return [
        {"id": b["id"], "title": chosen[b["id"]], "content": b["content"]}
        for b in ctx.blocks
        if b.get("id") in chosen and b.get("content")
    ]


def replayed_decisions(conversation, turn_id, detail: str = "all") -> dict:
    """Every entry's decision in the selection turn ``turn_id`` of ``conversation`` made,
    selected again from its trace (``worldbook.retrieval.replay``); ``reproduced`` says the
    blocks came out exactly as the turn's. A turn of another conversation, or one that
    selected nothing from a worldbook, is a 404."""
    try:
        turn = conversation.turns.filter(pk=turn_id).only("id", "trace").first()
    except LOOKUP_MISSES:  # a malformed id is just another unknown one
        turn = None
    if turn is None:
        raise NotFound("turn_not_found", "no such turn in this conversation")
    recorded = (turn.trace or {}).get("worldbook", {}).get("replay")
    if not recorded:
        raise NotFound("no_worldbook_selection", "this turn selected nothing from a worldbook")
    tokenizer = worldbook_tokenizer(counter_for(_turn_config(conversation, turn.trace)))
    result = replay(conversation.tenant, recorded, decisions=detail, tokenizer=tokenizer)
    fingerprint = turn.trace["worldbook"].get("selection_fingerprint")
    return {
        "turn_id": str(turn.id),
        "detail": detail,
        "reproduced": result.selection_fingerprint == fingerprint,
        "selection_fingerprint": result.selection_fingerprint,
        "snapshot": result.snapshot,
        "decisions": result.decisions,
    }


def _turn_config(conversation, trace: dict) -> ModelConfig | None:
    """The model config the turn counted with (its trace names it), if it is still there."""
    ref = (trace.get("read") or {}).get("model_config")
    try:
        return ModelConfig.objects.filter(tenant_id=conversation.tenant_id, pk=ref).first()
    except LOOKUP_MISSES:  # "env-default", or a trace from before it was recorded
        return None


def _reason(reason: str) -> str:
    return POSITION_UNAVAILABLE if reason == PLACEMENT_UNSUPPORTED else reason
