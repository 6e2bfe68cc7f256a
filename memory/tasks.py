"""Background work of the message store (thin wrappers around services, idempotent)."""

from __future__ import annotations

from celery import shared_task

from console.models import Tenant
from memory import services
from memory.configs.selectors import read_once
from memory.jobs import RUN_BUDGET_S
from memory.signals import messages_indexed


@shared_task(acks_late=True, name="memory.trim_session")
def trim_session(tenant_id: str, session_id: str, keep_recent: int) -> int:
    """Archive all but the latest ``keep_recent`` messages; repeating it changes nothing."""
    tenant = Tenant.objects.filter(pk=tenant_id).first()
    if tenant is None:
        return 0
    return services.trim_history(tenant, session_id, keep_recent)


# Sent on every turn, read by nobody: ``ignore_result`` spares the sender a subscription
# to the task's result channel on each send.
@shared_task(acks_late=True, ignore_result=True, name="memory.index_messages")
def index_messages(
    tenant_id: str,
    session_id: str,
    player_id: str,
    character_id: str,
    conversation_id: str,
    message_ids: list[str],
) -> int:
    """Index a conversation's new messages for recall (``memory.recall.indexing``), with
    the turns waiting beside them (``memory.recall.pending``), tenant by tenant; tell the
    receivers of ``messages_indexed`` of each conversation that had messages indexed; ask
    for a player's own index once they pass its size (``memory.recall.owner_index``). How
    many of this task's own messages were indexed."""
    from memory.recall import pending

    own = [tenant_id, session_id, player_id, character_id, conversation_id, message_ids]
    jobs = [own, *pending.take()]
    indexed: dict[int, int] = {}
    with read_once():  # the indexing and each receiver read the settings: once
        for tenant_key in dict.fromkeys(str(job[0]) for job in jobs):
            mine = [(n, job) for n, job in enumerate(jobs) if str(job[0]) == tenant_key]
            counts = _index_tenant(tenant_key, [job for _n, job in mine])
            indexed.update(zip((n for n, _job in mine), counts, strict=True))
    return indexed.get(0, 0)


def _index_tenant(tenant_id: str, jobs: list[list]) -> list[int]:
    """One tenant's jobs: indexed together, then each conversation's receivers told."""
    from memory.recall import indexing, owner_index

    tenant = Tenant.objects.filter(pk=tenant_id).first()
    if tenant is None:
        return [0] * len(jobs)
    owners = [
        {"session_id": s, "player_id": p, "character_id": c, "conversation_id": conversation}
        for _t, s, p, c, conversation, _ids in jobs
    ]
    counts = indexing.index_jobs(
        tenant,
        [
            indexing.Job(**owner, message_ids=job[5])
            for owner, job in zip(owners, jobs, strict=True)
        ],
    )
    players = set()
    for owner, job, count in zip(owners, jobs, counts, strict=True):
        if count:
            messages_indexed.send(sender=None, tenant=tenant, message_ids=job[5], **owner)
            players.add(int(owner["player_id"]))
    for player_id in sorted(players):
        if owner_index.wanted(tenant, player_id):
            build_owner_index.delay(tenant_id, player_id)
    return counts


@shared_task(acks_late=True, ignore_result=True, name="memory.build_owner_index")
def build_owner_index(tenant_id: str, player_id: int) -> bool:
    """Give a player with many recall rows an approximate index of their own (a second
    request while one builds, or once it is built, does nothing)."""
    from memory.recall import owner_index

    tenant = Tenant.objects.filter(pk=tenant_id).first()
    return tenant is not None and owner_index.build(tenant, player_id) is not None


@shared_task(acks_late=True, name="memory.reconcile_recall")
def reconcile_recall(tenant_id: str, session_id: str) -> int:
    """Bring a conversation's recall index in line with its messages after an edit."""
    from memory.recall import indexing

    tenant = Tenant.objects.filter(pk=tenant_id).first()
    return indexing.reconcile(tenant, session_id) if tenant is not None else 0


@shared_task(acks_late=True, ignore_result=True, name="memory.refresh_pack")
def refresh_pack(owner: dict, key: str, query: str) -> int:
    """Compute a conversation's next pre-turn memory pack (``memory.packs``)."""
    from memory import packs

    packs.refreshed()
    return packs.build(packs.Owner(**owner), key, query)


@shared_task(
    acks_late=True,
    ignore_result=True,
    name="memory.deliver_job",
    soft_time_limit=RUN_BUDGET_S,
    time_limit=RUN_BUDGET_S + 10,
)
def deliver_job(job_id: str) -> str:
    """Deliver one admitted learn or forget (``memory.jobs``); a second delivery of a job
    that is not queued does nothing."""
    from memory import jobs

    return jobs.deliver(job_id)


@shared_task(name="memory.requeue_jobs")
def requeue_jobs() -> int:
    """Send again the learn and forget jobs whose task was lost. Runs every minute."""
    from memory import jobs

    return jobs.requeue_stalled()


@shared_task(name="memory.rebuild_recall")
def rebuild_recall() -> int:
    """Move the recall index to the current embedder, a few conversations at a time.
    Runs every minute; does nothing once every row is the current embedder's."""
    from memory.recall import indexing, owner_index

    owner_index.prune()
    return indexing.rebuild_stale()
