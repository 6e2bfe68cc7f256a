"""Console pages of characters beyond the form (``views``): the avatar image, card import
and export, and the context the character page shows (avatar, bound books, last import).

Same rules as every console page: :func:`console.access.console_view` for roles, objects
through ``get_scoped_or_404`` (another tenant's id is a 404), writes through the services.
"""

from __future__ import annotations

from console.access import console_view
from console.scoping import get_scoped_or_404
from roleplay import selectors
from roleplay.downloads import image_response
from roleplay.models import Character
from worldbook import selectors as worldbook_reads


def files(request):
    """The uploaded files of a POST, else None (as ``console.access.posted`` for data)."""
    return request.FILES if request.method == "POST" else None


def character_page(character: Character, form) -> dict:
    """What the character page shows around its form."""
    return {
        "form": form,
        "character": character,
        "has_avatar": selectors.has_avatar(character),
        "bound_books": worldbook_reads.list_bindings(character.tenant, str(character.pk)),
    }


@console_view()
def character_avatar(request, pk):
    """The avatar as an image (or a plain one), for the console's ``<img>`` tags."""
    character = get_scoped_or_404(Character, request.tenant, pk=pk)
    return image_response(request, selectors.avatar_of(character))
