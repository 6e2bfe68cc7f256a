"""Tenant scoping in one place.

Every tenant-owned model derives from :class:`TenantScopedModel`; every API view and console
page reads through :func:`scoped` (or ``Model.objects.for_tenant``), so a foreign tenant's
object is simply not found: a 404, never a 403 that would confirm it exists.
"""

from __future__ import annotations

import uuid

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import models
from django.http import Http404


class TenantQuerySet(models.QuerySet):
    def for_tenant(self, tenant) -> TenantQuerySet:
        if tenant is None:
            return self.none()
        return self.filter(tenant=tenant)


class TenantScopedModel(models.Model):
    tenant = models.ForeignKey("console.Tenant", on_delete=models.CASCADE, related_name="+")

    objects = TenantQuerySet.as_manager()

    class Meta:
        abstract = True


def scoped(model_or_qs, tenant) -> TenantQuerySet:
    qs = model_or_qs if isinstance(model_or_qs, models.QuerySet) else model_or_qs.objects.all()
    return qs.for_tenant(tenant)


# What a lookup by a missing, foreign or malformed id raises (a bad UUID is a
# ValidationError): every one of them means "not found" to the caller.
LOOKUP_MISSES = (ObjectDoesNotExist, ValidationError, ValueError, TypeError)


def get_scoped_or_404(model_or_qs, tenant, **lookup):
    try:
        return scoped(model_or_qs, tenant).get(**lookup)
    except LOOKUP_MISSES as exc:
        raise Http404("not found") from exc


def canonical_uuid(value) -> str | None:
    """``value`` as a UUID's canonical text (lower case, dashed), or None if it is not one."""
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        return None


def is_uuid(value) -> bool:
    """Whether ``value`` reads as a UUID (a lookup by a malformed id finds nothing)."""
    return canonical_uuid(value) is not None
