"""Pre-turn memory packs in a turn (``memory.packs``, seed 003).

The turn plug-in ``memory_pack``, a ``read`` hook after ``memory_context``: before the
Actor, the turn takes the pack already computed for this conversation and the player's
memory as it is now (the owner revision read with the turn's memory, ``memory.turn_reads``),
within 50 ms; without one (none yet, expired, Redis away) it goes on and the trace says
``degraded``. A pack found is placed as one block labelled as an earlier lookup, and handed
to Agent V2's background (the turn's :class:`RecalledPack` slot). Once the reply is
committed, the next pack is requested for the player's words of this turn, under
the owner revision of that moment (a change of memory during the turn is in it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from memory import packs
from memory.models import MemoryOwnerState
from roleplay.memory_plugin import context as memory_context
from roleplay.turns.plugin import TurnPlugin

PACK_BLOCK_ID = "memory:recalled"


@dataclass
class RecalledPack:
    """The pack's text this turn placed (``ctx.slot(RecalledPack)``), empty without one."""

    text: str = ""
    # The next pack to request once the reply is committed: (owner, settings, query).
    refresh: tuple | None = None


class MemoryPackPlugin(TurnPlugin):
    name = "memory_pack"
    after = ("memory_context",)

    def read(self, ctx, conversation) -> None:
        apply(ctx, conversation)

    def after_reply(self, ctx):
        refresh = ctx.slot(RecalledPack).refresh
        return (lambda: _refresh(*refresh)) if refresh is not None else None


PLUGIN = MemoryPackPlugin()


def apply(ctx, conversation) -> None:
    if ctx.settings.memory_runtime != "internal":
        return
    read = memory_context.turn_read(ctx, conversation)
    if not read.config.enabled:
        return
    owner = packs.owner_of(conversation)
    status, pack = packs.read(owner.key(read.config, read.owner_revision))
    trace = {"status": status, "degraded": pack is None, "revision": read.owner_revision}
    if pack is not None and pack.get("text"):
        trace.update(
            items=len(pack.get("items", [])),
            age_s=round(max(time.time() - float(pack.get("built_at", 0)), 0.0), 1),
            position=ctx.place(PACK_BLOCK_ID, pack["text"]),
        )
        ctx.slot(RecalledPack).text = pack["text"]
    ctx.trace["memory_pack"] = trace
    if ctx.record and ctx.user_input:
        ctx.slot(RecalledPack).refresh = (owner, read.config, ctx.user_input)


def _refresh(owner: packs.Owner, config, query: str) -> None:
    revision = (
        MemoryOwnerState.objects.filter(tenant_id=owner.tenant_id, player_id=owner.player_id)
        .values_list("revision", flat=True)
        .first()
    )
    packs.request_refresh(owner, owner.key(config, revision or 0), query)
