"""The API's serializer plumbing every app's REST door shares: tenant-scoped references,
strict text, unknown fields refused, compare-and-set versions, and one way to validate a
request's body (a 400 naming every invalid field)."""

from __future__ import annotations

from django.db import models
from rest_framework import serializers

from console.scoping import scoped


class TenantRelatedField(serializers.PrimaryKeyRelatedField):
    """A foreign key that only resolves inside the caller's tenant."""

    def get_queryset(self):
        request = self.context["request"]
        model = self.queryset_model
        if not isinstance(model, type):  # a port's accessor (``console.owners``), asked now
            model = model()
        return scoped(model, request.tenant)

    def __init__(self, model, **kwargs):
        """``model``: the table, or a function that returns it (a capability's reference to
        a table it does not import, resolved per request)."""
        self.queryset_model = model
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        # An id is a JSON string or integer. Anything else is refused before the lookup:
        # ``pk=1.5`` would otherwise be truncated by the database cast and match row 1.
        if isinstance(data, bool) or not isinstance(data, int | str):
            raise serializers.ValidationError("invalid id")
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError:
            raise
        except Exception as exc:  # malformed UUIDs and the like
            raise serializers.ValidationError("invalid id") from exc


def optional_reference(model) -> TenantRelatedField:
    """An optional reference by UUID to one of the caller's ``model`` rows (None when left
    out or null)."""
    return TenantRelatedField(
        model, pk_field=serializers.UUIDField(), required=False, allow_null=True, default=None
    )


def validated(serializer_class, request, data=None):
    """The validated data of ``data`` (the request's body by default), or the 400 that names
    every invalid field; the request is the serializer's context (tenant-scoped ids)."""
    body = serializer_class(
        data=request.data if data is None else data, context={"request": request}
    )
    body.is_valid(raise_exception=True)
    return body.validated_data


class RejectUnknownFields:
    """Rejects unknown fields instead of silently ignoring them (a typo is an error)."""

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError({"body": ["expected a JSON object"]})
        unknown = set(data) - set(self.fields)
        if unknown:
            raise serializers.ValidationError({k: ["unknown field"] for k in sorted(unknown)})
        return super().to_internal_value(data)


class NoBody(RejectUnknownFields, serializers.Serializer):
    """An empty JSON object (or no body at all)."""


class StrictCharField(serializers.CharField):
    """Text that is text: a JSON number is refused (DRF would store ``-140245`` as its
    digits), and ``max_length`` counts what was sent, before white space is trimmed."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length, length=len(data))
        return super().to_internal_value(data)


class StrictSerializer(RejectUnknownFields, serializers.ModelSerializer):
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.CharField: StrictCharField,
        models.TextField: StrictCharField,
    }


class Versioned(serializers.Serializer):
    """A ``version`` for compare-and-set: set by the server on create, required on update
    (the version the caller edited; a stale one is the service's 409)."""

    version = serializers.IntegerField(
        min_value=1,
        max_value=2**31 - 1,
        required=False,
        help_text="In an update: the version you edited (required). Set by the server.",
    )

    def validate(self, attrs):
        if self.instance is None and "version" in attrs:
            raise serializers.ValidationError({"version": ["set by the server on create"]})
        if self.instance is not None and "version" not in attrs:
            message = "required: the version you edited (compare-and-set)"
            raise serializers.ValidationError({"version": [message]})
        return super().validate(attrs)
