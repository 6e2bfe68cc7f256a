"""Writes of a card import: one file becomes a character, its avatar and its bound book.

Everything that can fail is done before the first write: the file is read
(``roleplay.characters.cards.read``: size, PNG chunks with CRCs and bomb limits, ``.charx`` zip
limits), its fields mapped (``cards.mapping``), its image decoded (``cards.images``), and its
``character_book`` parsed by the worldbook's own importer (``worldbook.services
.parse_upload``: the same file limits, entry counts and field mapping as a worldbook
upload). Then one transaction creates the character through its service, stores the avatar,
creates the book and binds it to the character (binding ``prompt_id`` = the character's id),
and records the import. Any failure rolls all of it back: no character, no book.

A file is recognised by its SHA-256: importing it again returns the character the first
import made (``deduplicated``) and writes nothing, unless ``on_duplicate="copy"`` asks for
another character. (Operators re-import to get a fresh copy after editing one far less
often than integrations retry an upload; the default protects the common case.)
Imports of one tenant take turns on the tenant row, so two concurrent uploads of one file
still make one character.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from console.models import Tenant
from roleplay.characters.cards.errors import CardInvalid
from roleplay.characters.cards.images import normalize_avatar
from roleplay.characters.cards.mapping import BOOK, LIST_FIELDS, TEXT_FIELDS, card_to_fields
from roleplay.characters.cards.read import MAX_FILE_BYTES, CardFile, read_card_file
from roleplay.characters.cards.report import CardReport
from roleplay.characters.services import avatars
from roleplay.characters.services.characters import create_character
from roleplay.errors import FieldErrors
from roleplay.models import Character, CharacterImport
from roleplay.regex_scripts import services as regex_scripts
from roleplay.regex_scripts.services import REGEX_SCRIPTS
from worldbook import selectors as worldbook_reads
from worldbook import services as worldbooks

ON_DUPLICATE = ("existing", "copy")
# Character field -> where the card holds it, to name a refused value in the card's terms.
CARD_NAMES = {ours: f"data.{card}" for card, ours in {**TEXT_FIELDS, **LIST_FIELDS}.items()}


@dataclass
class ImportedCard:
    """The character a file made (or had made), the import report, the books bound."""

    character: Character
    report: dict[str, Any]
    books: list[dict[str, Any]] = field(default_factory=list)
    deduplicated: bool = False


@dataclass
class _Parsed:
    card: CardFile
    fields: dict[str, Any]
    avatar: bytes | None
    book: Any  # a worldbook BookIn, or None
    report: CardReport
    # ``extensions.regex_scripts`` as the card wrote it (stored as regex scripts, not kept)
    regex_scripts: Any = None


def import_card(
    tenant, filename: str, data: bytes, *, on_duplicate: str = "existing"
) -> ImportedCard:
    """Import one card file (CCv2/CCv3; JSON, PNG or ``.charx``), all or nothing."""
    if on_duplicate not in ON_DUPLICATE:
        raise FieldErrors({"on_duplicate": [f"must be one of {', '.join(ON_DUPLICATE)}"]})
    parsed = parse_card(filename, data)
    with transaction.atomic():
        # FOR NO KEY UPDATE: imports of the tenant wait for each other; rows that reference
        # the tenant (the character, the book) are still inserted meanwhile.
        list(Tenant.objects.select_for_update(no_key=True).filter(pk=tenant.pk).values("pk"))
        if on_duplicate == "existing":
            earlier = _earlier_import(tenant, parsed.card.sha256)
            if earlier is not None:
                return earlier
        return _write(tenant, filename, parsed)


def parse_card(filename: str, data: bytes) -> _Parsed:
    """Everything an import checks before it writes (raises with a stable code)."""
    card = read_card_file(filename, data, max_bytes=MAX_FILE_BYTES)
    report = CardReport(card.format, card.sha256)
    for code, message in card.warnings:
        report.warn(code, message)
    fields = card_to_fields(card.card, card.spec, report)
    avatar = None
    if card.image is not None:
        avatar = normalize_avatar(card.image, max_bytes=MAX_FILE_BYTES)
        report.avatar = "the PNG image" if card.container == "png" else "the main icon"
    elif card.container == "charx":
        report.avatar = "none (no embedded main icon)"
    book = None
    data_part = card.card if card.spec == "ccv1" else card.card["data"]
    if data_part.get(BOOK) is not None:
        book, report.book = _embedded_book(filename, data, card)
    scripts = _regex_scripts(fields, report)
    return _Parsed(card, fields, avatar, book, report, scripts)


def _regex_scripts(fields: dict[str, Any], report: CardReport) -> Any:
    """The card's regex scripts, taken out of ``extensions`` (they become the character's
    regex scripts, given back on export); each that cannot run is a warning now, before
    anything is written, and is not imported."""
    extensions = fields.get("extensions")
    if not isinstance(extensions, dict) or REGEX_SCRIPTS not in extensions:
        return None
    raws = extensions.pop(REGEX_SCRIPTS)
    for problem in regex_scripts.check_scripts(raws):
        report.warn(*regex_scripts.refused_warning(problem))
    return raws


def _embedded_book(filename: str, data: bytes, card: CardFile):
    """The card's ``character_book`` parsed by the worldbook importer: from the file itself
    for JSON and PNG (its provenance is the real file), from ``card.json`` for ``.charx``."""
    if card.container == "charx":
        filename, data = "card.json", json.dumps(card.card, ensure_ascii=False).encode()
    result = worldbooks.parse_upload(filename, data)
    model = worldbooks.parse_book(result.book)
    return model, {**result.report, "format": result.format}


def _earlier_import(tenant, sha256: str) -> ImportedCard | None:
    earlier = (
        CharacterImport.objects.filter(tenant=tenant, sha256=sha256)
        .select_related("character")
        .order_by("-created_at")
        .first()
    )
    if earlier is None:
        return None
    report = dict(earlier.report)
    report["warnings"] = [
        *report.get("warnings", []),
        {
            "code": "duplicate_file",
            "message": f"this file was imported on {earlier.created_at:%Y-%m-%d %H:%M} UTC; "
            "nothing was written (send on_duplicate=copy for another character)",
        },
    ]
    return ImportedCard(earlier.character, report, _bound_books(tenant, earlier.character), True)


def _write(tenant, filename: str, parsed: _Parsed) -> ImportedCard:
    try:
        character = create_character(tenant, **parsed.fields)
    except FieldErrors as exc:
        raise _in_card_terms(exc) from exc
    if parsed.avatar is not None:
        avatars.store_png(character, parsed.avatar)
    if parsed.book is not None:
        book, _revision = worldbooks.create_book(tenant, parsed.book, report=parsed.report.book)
        worldbooks.put_bindings(tenant, str(character.id), [{"book_id": str(book.id)}])
    report = parsed.report.to_dict()
    if parsed.regex_scripts is not None:
        result = regex_scripts.import_scripts(tenant, parsed.regex_scripts, character=character)
        report["regex_scripts"] = {**result, "allowed": False}
    CharacterImport.objects.create(
        tenant=tenant,
        character=character,
        sha256=parsed.card.sha256,
        format=parsed.card.format,
        filename=filename[:300],
        report=report,
    )
    return ImportedCard(character, report, _bound_books(tenant, character))


def _in_card_terms(exc: FieldErrors) -> CardInvalid:
    """A refused field named as the card names it (``data.first_mes``, not ``first_message``)."""
    errors = [
        {"loc": CARD_NAMES.get(item["loc"], f"data.{item['loc']}"), "msg": item["msg"]}
        for item in exc.details["errors"]
    ]
    message = "; ".join(f"{e['loc']}: {e['msg']}" for e in errors[:5])
    return CardInvalid(
        "card_field_invalid", f"the card cannot be stored: {message}", {"errors": errors}
    )


def _bound_books(tenant, character: Character) -> list[dict[str, Any]]:
    return [
        {"book_id": str(b.book_id), "name": b.book.name, "revision": b.revision}
        for b in worldbook_reads.list_bindings(tenant, str(character.id))
    ]
