"""``worldbook_search``: the entries of the conversation's books (the books bound to its
character, at the revisions a turn selects from) that best match the query, ranked by the
worldbook's own search (``worldbook.retrieval.search``, lexical and vector blended).

Input ``{query?, limit?, mode?}``: the node's query, else the player's words; at most
``limit`` entries (5; 1–20). Value ``{query, results: [{book_id, revision, entry_id, title,
score, content}], degraded}``; prompt content: each entry as ``title: content``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from console.db import run_db
from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityError, CapabilityValue
from worldbook.errors import WorldbookError
from worldbook.indexing import embedding_version
from worldbook.retrieval import search
from worldbook.selectors import bound_revisions

from .base import Scoped, checked_input, clipped, conversation_of, query_of

NAME = "worldbook_search"
MAX_ENTRY_CHARS = 2_000
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "maxLength": 2000},
        "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
        "mode": {"enum": ["lexical", "vector", "hybrid"], "default": "hybrid"},
    },
    "additionalProperties": False,
}


def _search(conversation, query: str, limit: int, mode: str) -> dict[str, Any]:
    tenant = conversation.tenant
    bound = bound_revisions(tenant, str(conversation.character_id), embedding_version())
    if not bound:
        return {"query": query, "results": [], "degraded": []}
    found = search(
        tenant, query=query, refs=[(b.book_id, b.revision) for b in bound], mode=mode, limit=limit
    )
    contents = {}
    for revision in bound:
        for entry in revision.load().entries:
            contents[(revision.book_id, entry.id)] = getattr(entry, "content", "") or ""
    results = [
        {
            **{k: r[k] for k in ("book_id", "revision", "entry_id", "title", "score")},
            "content": clipped(
                contents.get((r["book_id"], r["entry_id"]), r["excerpt"]), MAX_ENTRY_CHARS
            ),
        }
        for r in found["results"]
    ]
    return {"query": query, "results": results, "degraded": found["degraded"]}


class WorldbookSearch(Scoped):
    name = NAME
    input_schema = SCHEMA

    async def execute(self, call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        given = checked_input(SCHEMA, call.input)
        query = query_of(call, given.get("query"))
        if not query.strip():
            return CapabilityValue(value={"query": "", "results": [], "degraded": []})
        conversation = await conversation_of(self.scope)
        try:
            value = await run_db(_search, conversation, query, given["limit"], given["mode"])
        except WorldbookError as exc:
            raise CapabilityError(exc.code, exc.message) from None
        lines = [
            f"{r['title']}: {r['content']}" if r["title"] else r["content"]
            for r in value["results"]
        ]
        return CapabilityValue(value=value, prompt_content=clipped("\n\n".join(lines)) or None)


registry.register(
    NAME,
    WorldbookSearch,
    description="Search the conversation's worldbooks (the books bound to its character) "
    "for the entries that best match the query (the player's words by default).",
    input_schema=SCHEMA,
)
