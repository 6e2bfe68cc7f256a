"""Background work of the message store (thin wrappers around services, idempotent)."""

from __future__ import annotations

from celery import shared_task

from console.models import Tenant
from memory import services


@shared_task(acks_late=True, name="memory.trim_session")
def trim_session(tenant_id: str, session_id: str, keep_recent: int) -> int:
    """Archive all but the latest ``keep_recent`` messages; repeating it changes nothing."""
    tenant = Tenant.objects.filter(pk=tenant_id).first()
    if tenant is None:
        return 0
    return services.trim_history(tenant, session_id, keep_recent)
