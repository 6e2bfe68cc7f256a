"""The images HTTP API: image configs (and their test), the asset tool, signed image files.

Bodies are validated by the capability (``images.engine``), which raises coded 422s naming
the field; this module only reads the request, calls a service or selector and writes the
answer. Another tenant's config, job or file is a 404 like a missing one.
"""

from __future__ import annotations

import dataclasses

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.errors import ApiError
from console.idempotency import IDEMPOTENCY_KEY, MAX_KEY_LENGTH, request_fingerprint
from console.image_answers import ImageAnswers
from console.models import Scope
from console.pagination import MAX_OFFSET, Pagination
from console.storable import unstorable
from images import files, selectors, signing
from images.api import schemas
from images.engine.config import FIELDS as CONFIG_FIELDS
from images.engine.request import FIELDS as REQUEST_FIELDS
from images.engine.request import unknown_fields
from images.errors import BadRequest, not_found
from images.models import ImageConfig
from images.services import configs
from images.services.config_test import run_config_test
from images.services.jobs import generate_assets

CONFIG_ID = OpenApiParameter("config_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
SIGNED = OpenApiParameter(
    "signed", OpenApiTypes.STR, OpenApiParameter.PATH,
    description="The signed, expiring token of an image link (as the API handed it out).",
)  # fmt: skip
PAGE_PARAMETERS = [
    OpenApiParameter("limit", {"type": "integer", "minimum": 1, "maximum": Pagination.max_limit},
                     OpenApiParameter.QUERY, required=False),
    OpenApiParameter("offset", {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET},
                     OpenApiParameter.QUERY, required=False),
]  # fmt: skip
BACKEND_FAILED = OpenApiResponse(
    OpenApiTypes.OBJECT,
    description="The image backend refused the request (recorded; never resent).",
)


def _body(request, known) -> dict:
    """The JSON object sent, its shape checked as every ``/api/v1/`` body's is: not an object,
    or a field the operation does not take, is a 400 ``validation_error`` listing each
    ``loc``. The fields' own rules are the capability's 422s."""
    data = request.data
    if not isinstance(data, dict):
        raise _shape([{"loc": "body", "msg": "expected a JSON object"}])
    unknown = unknown_fields(data, known)
    if unknown:
        raise _shape([{"loc": v.field, "msg": "unknown field"} for v in unknown])
    return data


def _shape(errors: list[dict]) -> BadRequest:
    message = "; ".join(f"{e['loc']}: {e['msg']}" for e in errors[:5])
    return BadRequest("validation_error", message, {"errors": errors})


def config_out(config: ImageConfig) -> dict:
    return {
        "id": str(config.pk),
        **{name: getattr(config, name) for name in configs.EDITABLE},
        "api_key_configured": selectors.api_key_status(config) == "set",
        "created_at": config.created_at,
        "updated_at": config.updated_at,
    }


class ImagesView(BodyLimit, APIView):
    required_scope = Scope.ADMIN
    read_scopes = (Scope.ADMIN, Scope.CONTENT)


class ConfigsView(ImagesView):
    @extend_schema(
        operation_id="v1_image_configs_list",
        responses=schemas.ImageConfigPage,
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request):
        paginator = Pagination()
        rows = paginator.paginate_queryset(selectors.image_configs(request.tenant), request, self)
        return paginator.get_paginated_response([config_out(c) for c in rows])

    @extend_schema(request=schemas.ImageConfigCreate, responses={201: schemas.ImageConfigOut})
    def post(self, request):
        config = configs.create_image_config(request.tenant, **_body(request, CONFIG_FIELDS))
        return Response(config_out(config), status=201)


class ConfigDetailView(ImagesView):
    model = ImageConfig

    def config(self, request, config_id) -> ImageConfig:
        return selectors.get_image_config_by_id(request.tenant, config_id)

    @extend_schema(parameters=[CONFIG_ID], responses=schemas.ImageConfigOut)
    def get(self, request, config_id):
        return Response(config_out(self.config(request, config_id)))

    @extend_schema(
        parameters=[CONFIG_ID], request=schemas.ImageConfigUpdate, responses=schemas.ImageConfigOut
    )
    def patch(self, request, config_id):
        config = self.config(request, config_id)
        fields = _body(request, CONFIG_FIELDS)
        return Response(config_out(configs.update_image_config(config, **fields)))

    @extend_schema(parameters=[CONFIG_ID], responses={204: None})
    def delete(self, request, config_id):
        configs.delete_image_config(self.config(request, config_id))
        return Response(status=204)


class ConfigTestView(ImagesView):
    """One small real generation with the config (a billed call, recorded as an asset job)."""

    model = ImageConfig

    @extend_schema(parameters=[CONFIG_ID], request=None, responses=schemas.ConfigTestOut)
    def post(self, request, config_id):
        config = selectors.get_image_config_by_id(request.tenant, config_id)
        if request.data not in (None, {}):
            _body(request, ())
        return Response(dataclasses.asdict(run_config_test(request.tenant, config)))


def idempotency_key(request) -> str | None:
    key = request.headers.get("Idempotency-Key", "").strip()
    if not key:
        return None
    if len(key) > MAX_KEY_LENGTH:
        raise ApiError("invalid_idempotency_key", "Idempotency-Key is longer than 200 characters")
    problem = unstorable(key)
    if problem:
        raise ApiError("invalid_idempotency_key", f"Idempotency-Key {problem}")
    return key


class GenerationsView(ImagesView):
    """The standalone asset tool. Billed and not idempotent: submitted once; a timeout or
    incomplete evidence answers ``unknown`` and is never resent; an ``Idempotency-Key``
    answers the first result."""

    required_scope = Scope.CONTENT

    @extend_schema(
        operation_id="v1_images_generations_create",
        request=schemas.GenerationRequest,
        responses={200: schemas.GenerationResponse, 502: BACKEND_FAILED},
        parameters=[IDEMPOTENCY_KEY],
    )
    def post(self, request):
        payload = _body(request, REQUEST_FIELDS)
        key = idempotency_key(request)
        fingerprint = request_fingerprint(payload) if key else ""
        answer = generate_assets(request.tenant, payload, key=key, fingerprint=fingerprint)
        return Response(answer)


IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp")


class FileView(ImageAnswers, ImagesView):
    """A stored image by its signed link: the signature, its age and the caller's tenant are
    checked; anything wrong is a 404. No listing exists."""

    read_scopes = (Scope.ADMIN, Scope.CONTENT, Scope.PLAY)

    @extend_schema(
        parameters=[SIGNED],
        responses={(200, kind): OpenApiTypes.BINARY for kind in IMAGE_TYPES},
    )
    def get(self, request, signed):
        response = files.answer(signing.name_from(signed, request.tenant.pk))
        if response is None:
            raise not_found("no such image")
        return response
