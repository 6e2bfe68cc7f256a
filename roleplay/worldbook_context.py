"""Worldbook selection for a chat turn: resolve the character's bindings once, select with
the turn's input and recent history (turn id as seed), and hand placed blocks to the Actor.

The character id is the binding ``prompt_id``. The resolved revisions are kept in the turn
trace, so everything generated for this turn (including the gateway's retries) uses the same
book revisions; the next turn resolves again.
"""

from __future__ import annotations

from memory.models import Message
from roleplay.actor import PlacedBlock
from worldbook.engine.schema import SelectRequest
from worldbook.errors import WorldbookError
from worldbook.retrieval import select_context
from worldbook.selectors import resolve_bindings

HISTORY_MESSAGES = 20
TOKEN_BUDGET = 2400
CAPABILITIES = ["before_character", "after_character", "at_depth"]
MAX_QUERY = 8000
MAX_HISTORY_CHARS = 16_000


class WorldbookTurnError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def apply(ctx, conversation) -> None:
    tenant = conversation.tenant
    character = conversation.character
    try:
        books = ctx.trace.get("worldbook", {}).get("books") or resolve_bindings(
            tenant, str(character.id)
        )
    except WorldbookError as exc:
        raise WorldbookTurnError(exc.code, exc.message) from exc
    if not books:
        return
    message_index = Message.objects.filter(
        tenant=tenant, session_id=conversation.session_id, role__in=["user", "assistant"]
    ).count()
    request = SelectRequest(
        books=books,
        query=ctx.user_input[:MAX_QUERY] or "…",
        history=[
            {"role": m["role"], "content": m["content"][:MAX_HISTORY_CHARS]}
            for m in ctx.history[-HISTORY_MESSAGES:]
        ],
        audience="actor",
        strategy="hybrid",
        token_budget=TOKEN_BUDGET,
        seed=str(ctx.turn.id),
        template_vars={"char": character.name, "user": ctx.user_name},
        placement_capabilities=CAPABILITIES,
        conversation_id=conversation.session_id,
        message_index=message_index,
    )
    try:
        result = select_context(tenant, request)
    except WorldbookError as exc:
        raise WorldbookTurnError(exc.code, exc.message) from exc
    ctx.blocks = [
        PlacedBlock(content=b["content"], position=b["position"], depth=b["depth"], role=b["role"])
        for b in result["blocks"]
    ]
    ctx.trace["worldbook"] = {
        "books": books,
        "selected": [
            {"id": b["id"], "title": b["title"], "reason": b["reason"], "position": b["position"]}
            for b in result["blocks"]
        ],
        "excluded": [
            {"entry_id": d["entry_id"], "reason": d["reason"]}
            for d in result["decisions"]
            if not d.get("selected") and d.get("reason") != "not_triggered"
        ][:100],
        "token_count": result["token_count"],
        "degraded": result["degraded"],
        "selection_fingerprint": result["selection_fingerprint"],
    }
