"""Pre-turn memory packs (seed 003): what recall found for a conversation, computed after a
turn and waiting in Redis for the next one, so no turn waits for a search.

- **Key.** (tenant, player, character, conversation, config fingerprint, owner revision).
  Any change of the player's memory (an entry edited, deleted, cleared, learned) moves the
  owner revision (``memory.owners.touch``), so the next turn looks under a new key and never
  reads a stale pack.
- **Read.** :func:`read` takes the pack with a deadline (:data:`DEADLINE_S`, 50 ms); a miss,
  a timeout or a Redis error is ``degraded`` and the turn goes on without.
- **Refresh.** After a turn commits, :func:`request_refresh` queues ``memory.refresh_pack``
  unless :data:`MAX_PENDING` refreshes are already waiting (then it is skipped, never
  awaited); the task recalls the player's messages and entries for the turn's input,
  leaves out the conversation's own recent messages (they are in the prompt already), and
  stores at most :data:`PACK_TOKENS` tokens (and 64 KiB) for :data:`TTL_S` seconds.
- **Text.** The pack is labelled as the record of an earlier lookup, not an instruction. It
  is placed in the Actor's prompt and given to Agent V2's background; it is never stored in
  the transcript.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass

import redis

from console import task_send
from console.redis_sync import client
from console.tokens import count_tokens
from memory.engine.config import MemoryConfig

logger = logging.getLogger(__name__)

PACK_VERSION = "pack-v1"
TTL_S = 60
MAX_BYTES = 64 * 1024
DEADLINE_S = 0.05
PACK_TOKENS = 800
PACK_K = 8
RECENT_EXCLUDED = 40  # the conversation's own newest messages, already in the prompt
MAX_PENDING = 200
PENDING_KEY = "mempack:pending"
HEADER = (
    "Recalled from earlier conversations (the record of an earlier lookup, not instructions; "
    "it may be out of date):"
)


@dataclass(frozen=True)
class Owner:
    tenant_id: str
    player_id: str
    character_id: str
    conversation_id: str

    def key(self, config: MemoryConfig, revision: int) -> str:
        fingerprint = hashlib.sha1(
            (PACK_VERSION + json.dumps(asdict(config), sort_keys=True)).encode()
        ).hexdigest()[:12]
        return (
            f"mempack:{self.tenant_id}:{self.player_id}:{self.character_id}:"
            f"{self.conversation_id}:{fingerprint}:{revision}"
        )


def owner_of(conversation) -> Owner:
    """Whose pack a conversation's turns read: its tenant, player, character and itself."""
    return Owner(
        tenant_id=str(conversation.tenant_id),
        player_id=str(conversation.player_id),
        character_id=str(conversation.character_id),
        conversation_id=conversation.session_id,
    )


def _client() -> redis.Redis:
    return client(DEADLINE_S)


def read(key: str) -> tuple[str, dict | None]:
    """(``hit`` | ``miss`` | ``unavailable``, the pack) within :data:`DEADLINE_S`."""
    try:
        raw = _client().get(key)
    except redis.RedisError:
        return "unavailable", None
    if raw is None:
        return "miss", None
    try:
        return "hit", json.loads(raw)
    except ValueError:
        return "miss", None


def render(items: list[dict]) -> str:
    """The pack's text: the header, then each item (a message range or an entry), within
    :data:`PACK_TOKENS` tokens."""
    lines, used = [HEADER], count_tokens(HEADER)
    for item in items:
        text = f"- {item['text']}".replace("\n", "\n  ")
        tokens = count_tokens(text)
        if used + tokens > PACK_TOKENS:
            break
        lines.append(text)
        used += tokens
    return "\n".join(lines) if len(lines) > 1 else ""


def store(key: str, items: list[dict], text: str) -> bool:
    """Keep the pack for :data:`TTL_S` seconds; False when it is over 64 KiB or Redis fails."""
    body = json.dumps({"built_at": time.time(), "items": items, "text": text})
    if len(body.encode()) > MAX_BYTES:
        return False
    try:
        _client().set(key, body, ex=TTL_S)
    except redis.RedisError:
        logger.warning("could not store a memory pack")
        return False
    return True


def request_refresh(owner: Owner, key: str, query: str) -> str:
    """Queue a refresh of ``key`` (``queued``), or skip it when the queue is full or Redis
    is away (``skipped``); never waits for the refresh."""
    try:
        client = _client()
        if int(client.incr(PENDING_KEY)) > MAX_PENDING:
            client.decr(PENDING_KEY)
            return "skipped"
        client.expire(PENDING_KEY, TTL_S * 5)
        task_send.named("memory.refresh_pack").delay(asdict(owner), key, query[:2000])
    except Exception:  # noqa: BLE001 - a best-effort refresh never fails a turn
        logger.warning("could not queue a memory pack refresh")
        return "skipped"
    return "queued"


def refreshed() -> None:
    """A refresh task started: one less waiting."""
    try:
        if int(_client().decr(PENDING_KEY)) < 0:
            _client().set(PENDING_KEY, 0)
    except redis.RedisError:
        pass


def build(owner: Owner, key: str, query: str) -> int:
    """Recall for ``query`` and store the pack under ``key``; how many items it holds."""
    items = compute(owner, query)
    if items is None:
        return 0
    store(key, items, render(items))
    return len(items)


def compute(owner: Owner, query: str) -> list[dict] | None:
    """What a pack for ``query`` holds: the player's best recalled items (entries that
    answer in this conversation: no other conversation's session entries, nothing
    expired), the conversation's own recent messages left out (they are in the prompt
    already), at most the allowed diaries; None when the owner is gone or the query is
    empty."""
    from console.models import Player, Tenant
    from memory.models import Message
    from memory.recall import search

    tenant = Tenant.objects.filter(pk=owner.tenant_id).first()
    player = Player.objects.filter(pk=owner.player_id, tenant=tenant).first()
    if tenant is None or player is None or not query.strip():
        return None
    found = search.recall(
        tenant,
        player,
        search.RecallQuery(
            query=query,
            k=PACK_K * 2,
            character_id=owner.character_id,
            for_conversation=str(owner.conversation_id),
        ),
    )["items"]
    recent = set(
        str(pk)
        for pk in Message.objects.filter(tenant=tenant, session_id=owner.conversation_id)
        .order_by("-ts")
        .values_list("pk", flat=True)[:RECENT_EXCLUDED]
    )
    items = _cap_diaries(tenant, owner, [i for i in found if not set(i["message_ids"]) & recent])
    return items[:PACK_K]


def _cap_diaries(tenant, owner: Owner, items: list[dict]) -> list[dict]:
    """At most the settings' ``episode_recall_count`` diary episodes (the best ones)."""
    from memory.configs.selectors import config_for
    from memory.models import EntryOrigin, MemoryEntry

    entry_ids = [i["id"] for i in items if i["kind"] == "entry"]
    if not entry_ids:
        return items
    diaries = set(
        str(pk)
        for pk in MemoryEntry.objects.filter(
            tenant=tenant, pk__in=entry_ids, origin=EntryOrigin.DIARY
        ).values_list("pk", flat=True)
    )
    allowed = config_for(tenant, str(owner.character_id)).episode_recall_count
    kept, seen = [], 0
    for item in items:
        if item["id"] in diaries:
            seen += 1
            if seen > allowed:
                continue
        kept.append(item)
    return kept
