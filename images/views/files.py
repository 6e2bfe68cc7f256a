"""A stored image on a console page (the play page's pictures): the same signed, expiring
link as ``/api/v1/images/files/<signed>``, for a signed-in console user of the link's
tenant. Anything wrong is the same 404; there is no listing."""

from __future__ import annotations

from django.http import Http404

from console.access import console_view
from images import files, signing
from images.errors import ImagesError


@console_view()
def image_file(request, signed: str):
    try:
        name = signing.name_from(signed, request.tenant.pk)
    except ImagesError as exc:
        raise Http404("no such image") from exc
    response = files.answer(name)
    if response is None:
        raise Http404("no such image")
    return response
