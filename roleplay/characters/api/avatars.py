"""``/api/v1/characters/{id}/avatar`` and ``/api/v1/personas/{id}/avatar``: read, replace,
remove the one image a character or persona has.

``GET`` answers the stored PNG, or a plain image made from the owner's name when it has
none (``X-Avatar-Generated: true``), with an ``ETag``; ``If-None-Match`` gets a ``304``.
``PUT`` takes a multipart ``file`` (PNG, JPEG or WebP, at most 8 MiB, decoded under a pixel
limit and stored as PNG: ``roleplay.characters.services.avatars``); ``DELETE`` removes it. The
owner is
looked up first, so another tenant's id is a 404 before the body is read.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.errors import not_found
from console.image_answers import ImageAnswers
from console.models import Scope
from console.scoping import LOOKUP_MISSES, scoped
from console.uploads import FRAMING, uploaded_file
from roleplay.characters.cards.images import MAX_AVATAR_BYTES
from roleplay.characters.downloads import image_response
from roleplay.characters.selectors import avatar_of
from roleplay.characters.services import avatars
from roleplay.models import Character

FILE_UPLOAD = {
    "multipart/form-data": {
        "type": "object",
        "properties": {"file": {"type": "string", "format": "binary"}},
        "required": ["file"],
    }
}
IMAGE = {(200, "image/png"): OpenApiTypes.BINARY, 304: OpenApiResponse(description="unchanged")}
# The owner's id in the path (``pk``, which the schema spells ``id``).
OWNER_ID = OpenApiParameter("id", OpenApiTypes.UUID, OpenApiParameter.PATH)


@extend_schema(parameters=[OWNER_ID])
class AvatarView(ImageAnswers, BodyLimit, APIView):
    """Base of the avatar routes; subclasses name the ``model`` and its scopes."""

    model = Character
    parser_classes = [MultiPartParser]
    max_body_bytes = MAX_AVATAR_BYTES + FRAMING

    def owner(self, request, pk):
        try:
            return scoped(self.model, request.tenant).get(pk=pk)
        except LOOKUP_MISSES as exc:
            raise not_found() from exc

    @extend_schema(responses=IMAGE)
    def get(self, request, pk):
        return image_response(request, avatar_of(self.owner(request, pk)))

    @extend_schema(request=FILE_UPLOAD, responses={204: None})
    def put(self, request, pk):
        owner = self.owner(request, pk)
        _name, data = uploaded_file(request, "file", MAX_AVATAR_BYTES)
        avatars.set_avatar(owner, data)
        return Response(status=204)

    @extend_schema(responses={204: None})
    def delete(self, request, pk):
        avatars.clear_avatar(self.owner(request, pk))
        return Response(status=204)


class CharacterAvatarView(AvatarView):
    model = Character
    required_scope = Scope.CONTENT
    read_scopes = (Scope.CONTENT, Scope.PLAY)
