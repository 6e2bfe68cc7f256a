"""Answering with an image: avatars, PNG card exports, stored pictures.

DRF negotiates a renderer before the view runs, so a client that sends ``Accept: image/png``
(as browsers and image loaders do) must find one: :class:`ImageRenderer`. Errors of those
views still go out as the one JSON error format (:class:`ImageAnswers`), whatever the
client accepted. The image itself is a plain ``HttpResponse`` (avatars, card exports,
stored pictures), which DRF passes through.
"""

from __future__ import annotations

from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response

from console.renderers import FastJSONRenderer


class ImageRenderer(BaseRenderer):
    """Accepts ``image/*`` requests; JSON (an error) is still written as JSON."""

    media_type = "image/*"
    format = "image"
    charset = None
    render_style = "binary"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        if isinstance(data, bytes):
            return data
        return FastJSONRenderer().render(data)


class ImageAnswers:
    """Mixin of views that answer with images: JSON and images negotiated, errors in JSON."""

    renderer_classes = [FastJSONRenderer, ImageRenderer]

    def finalize_response(self, request, response, *args, **kwargs):
        if isinstance(response, Response) and response.status_code >= 400:
            request.accepted_renderer = FastJSONRenderer()
            request.accepted_media_type = FastJSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)
