"""Base API views: tenant-scoped querysets and writes, for every app's API."""

from __future__ import annotations

import json

from django.db import IntegrityError, transaction
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.utils import encoders

from console import audit
from console.body_limit import BodyLimit
from console.errors import ApiError, not_found
from console.idempotency import IDEMPOTENCY_KEY, run_idempotent
from console.scoping import LOOKUP_MISSES, scoped


class TenantScoped:
    """The tenant's rows of ``model``; a foreign or malformed id is a 404."""

    model = None
    # No dots: ``/characters/<id>.json`` is the format suffix, not part of the id.
    lookup_value_regex = "[^/.]+"

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            # drf-spectacular builds the schema without a request tenant; an empty queryset
            # lets it read the model's primary key type for the ``{id}`` path parameter.
            return self.model.objects.none()
        return scoped(self.model, self.request.tenant).order_by(*self.ordering)

    ordering = ("-created_at",)

    def get_object(self):
        try:
            return super().get_object()
        except (Http404, *LOOKUP_MISSES) as exc:
            raise not_found() from exc


class TenantGenericViewSet(TenantScoped, BodyLimit, viewsets.GenericViewSet):
    """Actions of its own over one tenant's rows (no CRUD)."""


class TenantModelViewSet(TenantScoped, BodyLimit, viewsets.ModelViewSet):
    """CRUD over one tenant's rows. Bodies of these resources are small (the longest
    character text is ~170k characters): the default 2 MiB limit of ``BodyLimit`` applies."""

    # Each save runs in its own savepoint: a unique violation caught here must roll back only
    # this statement, not poison an enclosing transaction (a view's own ``atomic`` block, or
    # ATOMIC_REQUESTS), which would otherwise fail every later query of the request.
    def perform_create(self, serializer):
        try:
            with transaction.atomic():
                serializer.save(tenant=self.request.tenant)
        except IntegrityError as exc:
            raise _unique_conflict() from exc

    def perform_update(self, serializer):
        try:
            with transaction.atomic():
                serializer.save()
        except IntegrityError as exc:
            raise _unique_conflict() from exc


def _unique_conflict() -> ApiError:
    return ApiError("conflict", "an object with these unique fields exists", status_code=409)


class ServiceWrites(TenantModelViewSet):
    """Creates, updates and deletes through the concept's services, never ``serializer.save()``
    or ``instance.delete()``: the services hold the rules every other door applies too."""

    create_service = update_service = delete_service = None
    # The create and update services audit their writes: they are given ``by`` (the console
    # user, or the API token's name: ``console.audit.actor``) and the ``request``.
    audited = False

    @extend_schema(parameters=[IDEMPOTENCY_KEY])
    def create(self, request, *args, **kwargs):
        """A create honours ``Idempotency-Key``: a retried request makes no second row."""

        def work():
            response = super(ServiceWrites, self).create(request, *args, **kwargs)
            # Stored as the record's JSON, so ids and times become their JSON text now.
            body = json.loads(json.dumps(response.data, cls=encoders.JSONEncoder))
            return body, response.status_code

        scope = f"roleplay.{self.model._meta.model_name}"
        return run_idempotent(request, scope, request.data, work)

    def perform_create(self, serializer):
        serializer.instance = type(self).create_service(
            self.request.tenant, **self._who(), **serializer.validated_data
        )

    def perform_update(self, serializer):
        serializer.instance = type(self).update_service(
            serializer.instance, **self._who(), **serializer.validated_data
        )

    def _who(self) -> dict:
        if not self.audited:
            return {}
        return {"by": audit.actor(self.request.user), "request": self.request}

    def perform_destroy(self, instance):
        type(self).delete_service(instance)


class QueryFilters(serializers.Serializer):
    """A list's filters from the query string (``limit``/``offset`` are the pagination's):
    each given one validated, 400 on a bad one, and applied as a field lookup."""

    def to_internal_value(self, data):
        return super().to_internal_value({key: data[key] for key in data})


class FilteredList:
    """A viewset whose ``list`` is narrowed by its ``list_query`` (a :class:`QueryFilters`)."""

    list_query: type[QueryFilters]

    def get_queryset(self):
        rows = super().get_queryset()  # type: ignore[misc]
        if getattr(self, "swagger_fake_view", False) or self.action != "list":  # type: ignore[attr-defined]
            return rows
        query = self.list_query(data=self.request.query_params)  # type: ignore[attr-defined]
        query.is_valid(raise_exception=True)
        return rows.filter(**query.validated_data)
