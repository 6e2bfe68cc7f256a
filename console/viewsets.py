"""Base API views: tenant-scoped querysets and writes, for every app's API."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from rest_framework import viewsets

from console.errors import ApiError, not_found
from console.scoping import scoped


class TenantModelViewSet(viewsets.ModelViewSet):
    """CRUD over one tenant's rows; a foreign or malformed id is a 404."""

    model = None
    # No dots: ``/characters/<id>.json`` is the format suffix, not part of the id.
    lookup_value_regex = "[^/.]+"

    def get_queryset(self):
        return scoped(self.model, self.request.tenant).order_by(*self.ordering)

    ordering = ("-created_at",)

    def get_object(self):
        try:
            return super().get_object()
        except Exception as exc:
            if isinstance(exc, ApiError):
                raise
            from django.core.exceptions import ValidationError
            from django.http import Http404

            if isinstance(exc, Http404 | ValidationError | ValueError):
                raise not_found() from exc
            raise

    def perform_create(self, serializer):
        try:
            serializer.save(tenant=self.request.tenant)
        except IntegrityError as exc:
            raise ApiError(
                "conflict", "an object with these unique fields exists", status_code=409
            ) from exc

    def perform_update(self, serializer):
        try:
            serializer.save()
        except IntegrityError as exc:
            raise ApiError(
                "conflict", "an object with these unique fields exists", status_code=409
            ) from exc
