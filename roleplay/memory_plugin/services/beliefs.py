"""Beliefs built in the background (seed 003): a player's active facts and episodes go to
the tenant's default model (purpose ``memory_beliefs``), which may answer generalisations
each supported by at least two of them (``memory.engine.beliefs``). They are written as
active ``belief`` entries (scope ``shared``, origin ``inference``) with their supporters
(``memory.entries.beliefs``); deleting a supporter later demotes the belief to a candidate.

- **When.** With the settings' ``beliefs`` on (the tenant's), the sweep
  (``roleplay.beliefs_sweep``, every 5 minutes) sends ``roleplay.build_beliefs`` for each
  player whose facts or episodes changed since their last build.
- **One at a time.** ``BeliefBuild`` (one row per player) is claimed under a row lock; a
  build left running for :data:`ABANDONED_AFTER` may be taken over.
- **Epoch.** A person's change meanwhile (an edit, delete, forget or clear) makes the
  result ``stale``: nothing is written. A belief equal to one the player has (content hash)
  gains the new supporters instead of a second row.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from console import task_send
from console.db import run_db
from console.models import Player
from memory import owners
from memory.configs.selectors import config_for
from memory.engine import beliefs as engine
from memory.engine.consolidation import Rejected, Unparsable
from memory.engine.entries import content_hash
from memory.entries.beliefs import support
from memory.entries.services import add_entry, clean_content
from memory.errors import MemoryModelError
from memory.models import BeliefBuild, EntryOrigin, EntryStatus, MemoryEntry, MemorySettings
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway, resolve_config
from roleplay.llm.types import ModelRequest

logger = logging.getLogger(__name__)

ABANDONED_AFTER = timedelta(minutes=10)
SOURCE_KINDS = ("fact", "episode")
RUNNING, DONE, FAILED, STALE = "running", "done", "failed", "stale"


def enabled(tenant) -> bool:
    config = config_for(tenant)
    return config.enabled and config.beliefs


def sweep(limit: int = 200) -> int:
    """Send a build for each player whose facts or episodes changed since their last one."""
    build_beliefs = task_send.named("roleplay.build_beliefs")
    tenant_ids = MemorySettings.objects.filter(character_id="", data__beliefs=True).values_list(
        "tenant_id", flat=True
    )
    changed = (
        MemoryEntry.objects.filter(
            tenant_id__in=list(tenant_ids),
            status=EntryStatus.ACTIVE,
            kind__in=SOURCE_KINDS,
            player__isnull=False,
        )
        .values("player_id")
        .annotate(newest=Max("updated_at"))
    )
    built = dict(BeliefBuild.objects.values_list("player_id", "built_at"))
    sent = 0
    for row in changed[:limit]:
        last = built.get(row["player_id"])
        if last is None or last < row["newest"]:
            build_beliefs.delay(row["player_id"])
            sent += 1
    return sent


def build(player_id) -> str:
    """Build the player's beliefs now: ``done``, ``stale``, ``failed``, ``busy``,
    ``disabled`` or ``empty``."""
    player = Player.objects.select_related("tenant").filter(pk=player_id).first()
    if player is None or not enabled(player.tenant):
        return "disabled"
    tenant = player.tenant
    started = timezone.now()
    if not _claim(tenant, player, started):
        return "busy"
    try:
        return _build(tenant, player, started)
    except Exception:  # the build must not stay "running" until it is taken over
        logger.exception("beliefs of player %s failed", player.pk)
        return _close(player, FAILED, error_code="internal_error")


def _build(tenant, player, started) -> str:
    _revision, epoch = owners.state(tenant, player.pk)
    rows = list(
        MemoryEntry.objects.filter(
            tenant=tenant, player=player, status=EntryStatus.ACTIVE, kind__in=SOURCE_KINDS
        )
        .order_by("-updated_at")
        .values_list("pk", "kind", "content")[: engine.MAX_SOURCES]
    )
    if len(rows) < engine.MIN_SUPPORTERS:
        return _close(player, DONE, built_at=started)
    known = {str(pk): content for pk, _kind, content in rows}
    messages, response_format = engine.request([(str(pk), k, c) for pk, k, c in rows])
    gateway = Gateway(
        tenant, resolve_config(tenant), "memory_beliefs", run_db=run_db, player_id=player.pk
    )
    request = ModelRequest(
        messages, response_format=response_format, temperature=engine.TEMPERATURE
    )
    try:
        result = asyncio.run(gateway.complete(request))
        found = engine.check(engine.parse_beliefs(result.content), known)
    except (ModelError, Unparsable, Rejected) as exc:
        code = getattr(exc, "code", "unparsable_answer")
        return _close(player, FAILED, error_code=code)
    try:
        with transaction.atomic():
            owners.lock(player.pk)
            if not owners.epoch_is(tenant, player.pk, epoch) or not enabled(tenant):
                return _close(player, STALE, built_at=started)
            added = sum(_write(tenant, player, content, ids) for content, ids in found)
            return _close(player, DONE, built_at=started, added=added)
    except MemoryModelError as exc:
        return _close(player, FAILED, error_code=exc.code)


def _claim(tenant, player, started) -> bool:
    with transaction.atomic():
        row, _ = BeliefBuild.objects.select_for_update().get_or_create(
            player=player, defaults={"tenant": tenant, "status": DONE}
        )
        if row.status == RUNNING and row.started_at > started - ABANDONED_AFTER:
            return False
        BeliefBuild.objects.filter(pk=row.pk).update(
            status=RUNNING, started_at=started, error_code=""
        )
        return True


def _write(tenant, player, content: str, supporter_ids) -> int:
    """The belief with its supporters; 1 if it is new, 0 if it was known already."""
    text = clean_content("belief", content)
    known = MemoryEntry.objects.filter(
        tenant=tenant,
        player=player,
        kind="belief",
        status__in=(EntryStatus.ACTIVE, EntryStatus.CANDIDATE),
        content_hash=content_hash(text),
    ).first()
    belief = known or add_entry(
        tenant, player, kind="belief", scope="shared", content=text,
        status=EntryStatus.ACTIVE, origin=EntryOrigin.INFERENCE,
    )  # fmt: skip
    support(tenant, belief, supporter_ids)
    return 0 if known else 1


def _close(player, status: str, *, built_at=None, added: int = 0, error_code: str = "") -> str:
    changes = {"status": status, "added": added, "error_code": error_code}
    if built_at is not None:
        changes["built_at"] = built_at
    BeliefBuild.objects.filter(player=player).update(**changes)
    if status == FAILED:
        logger.info("beliefs of player %s: %s", player.pk, error_code)
    return status
