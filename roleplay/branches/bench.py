"""``bench_branches``: how long making a branch takes at the end of a long history against a
short one (the goal: independent of the history's length), and what the history read of the
turn costs on a conversation that is no branch (the statement with the lineage lookup
against the plain one it replaced, as a baseline run in the same process) and on a branch.
The tenant is made here and deleted afterwards."""

from __future__ import annotations

import secrets
import statistics
import time
import uuid
from collections.abc import Callable

from console.models import Player, Tenant
from console.rows import prepared
from console.services import create_tenant
from memory import selectors as message_reads
from memory.models import Message
from roleplay.branches import services
from roleplay.models import Character, Conversation

# What the turn's history read was before branches: the baseline of ``history_*`` figures.
_PLAIN_HISTORY_SQL = f"""
    SELECT id, ts, role, content, edited FROM {Message._meta.db_table}
    WHERE tenant_id = %s AND session_id = %s AND NOT archived
    ORDER BY ts DESC LIMIT %s
"""


def _conversation(tenant, character, player, messages: int) -> tuple[Conversation, list]:
    conversation = Conversation.objects.create(tenant=tenant, character=character, player=player)
    rows = [
        Message(
            tenant=tenant,
            id=uuid.uuid4(),
            session_id=conversation.session_id,
            role="user" if i % 2 == 0 else "assistant",
            content=f"line {i}: the lighthouse keeper counts the ships again.",
            ts=1_700_000_000_000 + i,
        )
        for i in range(messages)
    ]
    Message.objects.bulk_create(rows, batch_size=2000)
    return conversation, rows


def _p50_ms(work: Callable[[], object], repeat: int) -> float:
    work()  # warm: plans, caches
    took = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        took.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(took), 3)


def measure(messages: int, repeat: int) -> dict:
    tenant = create_tenant(f"bench-branches-{secrets.token_hex(4)}")
    try:
        character = Character.objects.create(tenant=tenant, name="Mira")
        player = Player.objects.create(tenant=tenant, external_id="bench-player")
        long, long_rows = _conversation(tenant, character, player, messages)
        short, short_rows = _conversation(tenant, character, player, 10)
        at_long = _p50_ms(lambda: services.create_branch(long, long_rows[-1].id), repeat)
        at_middle = _p50_ms(
            lambda: services.create_branch(long, long_rows[len(long_rows) // 2].id), repeat
        )
        at_short = _p50_ms(lambda: services.create_branch(short, short_rows[-1].id), repeat)
        branch = services.create_branch(long, long_rows[-1].id)

        def plain():
            params = [tenant.pk, long.session_id, 50]
            with prepared(_PLAIN_HISTORY_SQL, params) as cursor:
                return cursor.fetchall()

        history_plain = _p50_ms(plain, repeat * 5)
        history_lineage = _p50_ms(
            lambda: message_reads.get_history_lines(tenant, long.session_id, 50), repeat * 5
        )
        history_branch = _p50_ms(
            lambda: message_reads.get_history_lines(tenant, branch.session_id, 50), repeat * 5
        )
    finally:
        Tenant.objects.filter(pk=tenant.pk).delete()
    return {
        "messages": messages,
        "repeat": repeat,
        "branch_at_end_p50_ms": at_long,
        "branch_at_middle_p50_ms": at_middle,
        "branch_short_history_p50_ms": at_short,
        "branch_ratio_long_to_short": round(at_long / at_short, 3) if at_short else None,
        "history_read_before_branches_p50_ms": history_plain,
        "history_read_no_branch_p50_ms": history_lineage,
        "history_read_no_branch_ratio": round(history_lineage / history_plain, 3)
        if history_plain
        else None,
        "history_read_in_branch_p50_ms": history_branch,
    }
