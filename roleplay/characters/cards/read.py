"""A card file's bytes -> the card object, its format, its image and its SHA-256.

Four containers, told apart by their first bytes (the file name only breaks ties):

* PNG: the worldbook importer's chunk reader (``worldbook.engine.importers.png``): the
  same signature, CRC, truncation and decompression-bomb checks, ``ccv3`` preferred over
  ``chara``; the PNG itself is the avatar;
* ``.charx`` (a zip): :mod:`roleplay.characters.cards.charx`; its main icon is the avatar;
* JSON: parsed like the worldbook importer parses JSON (UTF-8, no NaN, bounded depth);
* YAML (``.yaml``/``.yml``, text-generation-webui's characters):
:mod:`roleplay.characters.cards.legacy`.

Older tools' character objects (Pygmalion's ``char_name``..., text-generation-webui's
``name``/``context``/``greeting``) become the CCv1 card SillyTavern makes of them.

The card's ``spec`` decides CCv3, CCv2 or CCv1 (a bare object with ``name`` and
``first_mes``, as old tools and SillyTavern's own top level write it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from roleplay.characters.cards.charx import ZIP_SIGNATURE, read_charx
from roleplay.characters.cards.errors import (
    UNSUPPORTED_FORMAT,
    CardFailure,
    CardTooLarge,
    from_import_failure,
    invalid,
)
from roleplay.characters.cards.legacy import YAML_NAMES, legacy_card, load_yaml
from worldbook.engine.importers.cards import looks_like_v1_card
from worldbook.engine.importers.errors import ImportFailure
from worldbook.engine.importers.parse import admitted, load_json
from worldbook.engine.importers.png import PNG_SIGNATURE, read_png_card

MAX_FILE_BYTES = 16 * 1024 * 1024  # the worldbook importer's file limit
SPECS = {"chara_card_v3": "ccv3", "chara_card_v2": "ccv2"}


@dataclass
class CardFile:
    """What a file holds: the card object, ``spec`` (ccv1/ccv2/ccv3), the container
    (``json``/``png``/``charx``), the image bytes to use as the avatar, and notes."""

    card: dict[str, Any]
    spec: str
    container: str
    sha256: str
    image: bytes | None = None
    warnings: list[tuple[str, str]] = field(default_factory=list)

    @property
    def format(self) -> str:
        """``ccv3_png``, ``ccv2_json``, ``ccv3_charx``...: what the report calls the file."""
        return f"{self.spec}_{self.container}"


def read_card_file(filename: str, data: bytes, *, max_bytes: int = MAX_FILE_BYTES) -> CardFile:
    """Read one uploaded card; raises :class:`CardFailure` with a stable code."""
    sha256 = admitted(data, max_bytes, CardTooLarge)
    warnings: list[tuple[str, str]] = []
    image: bytes | None = None
    try:
        if data.startswith(PNG_SIGNATURE):
            card, keyword, notes = read_png_card(data, max_bytes)
            warnings += [("card_chunk_fallback", note) for note in notes]
            container, image = "png", data
        elif data.startswith(ZIP_SIGNATURE):
            charx = read_charx(data, max_bytes)
            warnings += [("charx_icon", note) for note in charx.warnings]
            card, container, image = charx.card, "charx", charx.icon
        elif filename.lower().endswith(YAML_NAMES):
            card, container = load_yaml(data), "yaml"
        else:
            _refuse_by_name(filename)
            card, container = load_json(data), "json"
    except ImportFailure as exc:
        raise from_import_failure(exc) from exc
    if not isinstance(card, dict):
        raise invalid("the card is not a JSON object")
    older = legacy_card(card)
    if older is not None:
        card = older[0]
        warnings.append(("legacy_card", f"a {older[1]} character, read as a CCv1 card"))
    return CardFile(card, card_spec(card), container, sha256, image, warnings)


def _refuse_by_name(filename: str) -> None:
    """A ``.png``/``.charx`` name on bytes that are neither: say so, rather than "bad JSON"."""
    lowered = filename.lower()
    if lowered.endswith(".png"):
        raise CardFailure("invalid_png", "not a PNG file (bad signature)", {})
    if lowered.endswith(".charx"):
        raise CardFailure("invalid_charx", "not a .charx file (not a zip archive)", {})


def card_spec(card: dict[str, Any]) -> str:
    """``ccv3``/``ccv2``/``ccv1`` of a card object; anything else is ``unsupported_format``."""
    spec = card.get("spec")
    if isinstance(spec, str) and spec in SPECS:
        if not isinstance(card.get("data"), dict):
            raise invalid("the card has no 'data' object", spec=spec)
        return SPECS[spec]
    if spec is None and looks_like_v1_card(card):
        return "ccv1"
    if spec is None and isinstance(card.get("data"), dict) and "name" in card["data"]:
        return "ccv2"  # a CCv2 body whose writer forgot ``spec``
    shown = spec if isinstance(spec, str) else None
    raise CardFailure(
        UNSUPPORTED_FORMAT,
        f"unsupported card spec {shown!r}" if shown else "not a character card (no 'spec')",
        {"spec": shown} if shown else {},
    )
