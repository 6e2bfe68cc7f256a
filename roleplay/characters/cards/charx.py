"""Reading a CCv3 ``.charx``: a zip with ``card.json`` at its root and assets beside it.

Nothing is extracted to disk and only two members are ever decompressed: ``card.json`` and
the main icon (the avatar). The zip is read with the limits of any upload:

* the archive may list at most :data:`MAX_MEMBERS` members (a central directory of a
  million tiny entries is refused before any is read);
* each member read is bounded: ``read(limit + 1)`` stops a member that inflates past its
  limit (a zip bomb) after ``limit`` bytes, whatever its header claims;
* a member read to its end is CRC-checked by :mod:`zipfile` (``invalid_charx``), encrypted
  members are refused, and a path is only ever a key to look up, never a file name.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from typing import Any

from roleplay.characters.cards.errors import DECOMPRESSION_BOMB, INVALID_CHARX, CardFailure, invalid

CARD_MEMBER = "card.json"
MAX_MEMBERS = 2_000
ZIP_SIGNATURE = b"PK\x03\x04"
EMBEDDED_SCHEMES = ("embeded://", "embedded://")  # the spec's spelling, and the usual one


@dataclass
class Charx:
    """The card object of a ``.charx``, its main icon's bytes (if any) and notes."""

    card: dict[str, Any]
    icon: bytes | None
    icon_path: str | None = None
    members: int = 0
    warnings: list[str] = field(default_factory=list)


def _bad(message: str, **details: Any) -> CardFailure:
    return CardFailure(INVALID_CHARX, message, details)


def read_charx(data: bytes, limit: int) -> Charx:
    """Open the zip, read ``card.json`` and the main icon, each within ``limit`` bytes."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise _bad(f"not a valid .charx (zip) file: {exc}") from exc
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise _bad(
                f"the .charx has {len(infos)} members; the limit is {MAX_MEMBERS}",
                members=len(infos),
                limit=MAX_MEMBERS,
            )
        names = {info.filename: info for info in infos}
        if CARD_MEMBER not in names:
            raise _bad("the .charx has no card.json at its root")
        card = _load_card(_read(archive, names[CARD_MEMBER], limit))
        path, warnings = main_icon_path(card, names)
        icon = _read(archive, names[path], limit) if path else None
    return Charx(card=card, icon=icon, icon_path=path, members=len(infos), warnings=warnings)


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    if info.flag_bits & 0x1:
        raise _bad(f"{info.filename} is encrypted", member=info.filename)
    try:
        with archive.open(info) as member:
            body = member.read(limit + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError) as exc:
        raise _bad(f"{info.filename} cannot be read: {exc}", member=info.filename) from exc
    except (EOFError, ValueError, RuntimeError) as exc:  # zlib errors, truncated data
        raise _bad(f"{info.filename} is corrupt: {exc}", member=info.filename) from exc
    if len(body) > limit:
        raise CardFailure(
            DECOMPRESSION_BOMB,
            f"{info.filename} inflates past the {limit}-byte limit",
            {"member": info.filename, "limit": limit},
        )
    return body


def _load_card(raw: bytes) -> dict[str, Any]:
    try:
        card = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise invalid("card.json does not hold valid JSON", member=CARD_MEMBER) from exc
    if not isinstance(card, dict):
        raise invalid("card.json does not hold a JSON object", member=CARD_MEMBER)
    return card


def main_icon_path(card: dict[str, Any], names: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The zip path of the card's main icon: the ``icon`` asset named ``main``, else the
    first ``icon`` asset, when its URI points into the archive (``embeded://path``)."""
    data = card.get("data")
    assets = data.get("assets") if isinstance(data, dict) else None
    if not isinstance(assets, list):
        return None, []
    icons = [a for a in assets if isinstance(a, dict) and a.get("type") == "icon"]
    icons.sort(key=lambda asset: asset.get("name") != "main")
    for asset in icons:
        uri = asset.get("uri")
        if not isinstance(uri, str):
            continue
        for scheme in EMBEDDED_SCHEMES:
            if uri.startswith(scheme):
                path = uri[len(scheme) :]
                if path in names:
                    return path, []
                return None, [f"the icon {uri!r} is not in the archive; no avatar"]
    return None, []
