"""Reading a character out as a card file (``GET /api/v1/characters/{id}/export`` and the
console's download): CCv3 PNG, CCv3 JSON or CCv2 JSON.

A read: the character's fields, its enabled bound books at their bound (or head) revisions
(``worldbook.selectors.resolve_bindings``; a broken binding is the worldbook's
``binding_broken`` 409 rather than a card silently missing its lore), embedded as the
card's ``character_book`` (several books merge into one, a card holds one), and for a PNG
the avatar, or a plain generated image when there is none. The file is built by the pure
``roleplay.characters.cards.build``.
"""

from __future__ import annotations

from typing import Any

from roleplay.characters.cards.book import merge_books, to_character_book
from roleplay.characters.cards.build import EXPORT_FORMATS, build_card, file_stem
from roleplay.characters.cards.errors import INVALID_EXPORT_FORMAT, CardFailure
from roleplay.characters.cards.mapping import LIST_FIELDS, TEXT_FIELDS
from roleplay.characters.downloads import FileOut
from roleplay.characters.selectors import avatar_of
from roleplay.models import Character
from roleplay.regex_scripts import selectors as regex_selectors
from worldbook import selectors as worldbook_reads

CONTENT_TYPES = {
    "ccv3_png": "image/png",
    "ccv3_json": "application/json",
    "ccv2_json": "application/json",
}


def check_format(fmt: str) -> str:
    if fmt not in EXPORT_FORMATS:
        raise CardFailure(
            INVALID_EXPORT_FORMAT,
            f"format must be one of {', '.join(EXPORT_FORMATS)}",
            {"allowed": list(EXPORT_FORMATS)},
        )
    return fmt


def character_book(tenant, character: Character) -> dict[str, Any] | None:
    """The character's enabled bound books as one ``character_book``, or None."""
    books = []
    for ref in worldbook_reads.resolve_bindings(tenant, str(character.id)):
        book = worldbook_reads.get_book(tenant, ref["book_id"])
        books.append(worldbook_reads.get_revision(tenant, book, ref["revision"]).content)
    if not books:
        return None
    return to_character_book(merge_books(books, f"{character.name} worldbook"[:300]))


def export_character(tenant, character: Character, fmt: str) -> FileOut:
    """The card file of ``character`` in ``fmt`` (``ccv3_png``, ``ccv3_json``, ``ccv2_json``)."""
    check_format(fmt)
    fields = {
        ours: getattr(character, ours) for ours in (*TEXT_FIELDS.values(), *LIST_FIELDS.values())
    }
    fields["extensions"] = dict(character.extensions)
    scripts = regex_selectors.owned(tenant, scope="character", character=character)
    if scripts:  # the character's regex scripts, where SillyTavern keeps them
        fields["extensions"]["regex_scripts"] = [row.script for row in scripts]
    fields["author_note"] = character.author_note
    image = avatar_of(character).data if fmt == "ccv3_png" else None
    data = build_card(fields, fmt, book=character_book(tenant, character), image=image)
    suffix = "png" if fmt == "ccv3_png" else "json"
    return FileOut(data, CONTENT_TYPES[fmt], f"{file_stem(character.name)}.{suffix}")
