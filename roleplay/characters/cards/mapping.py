"""Card fields <-> character fields, both ways, with every card field accounted for.

CCv2 and CCv3 share the text and list fields, which map one to one onto ``Character``
columns (:data:`TEXT_FIELDS`, :data:`LIST_FIELDS`). ``extensions`` is kept verbatim,
unknown keys and all. What has no column — CCv3's ``nickname``, ``group_only_greetings``,
``creator_notes_multilingual``, ``source``, ``assets``, ``creation_date``,
``modification_date``, and any field of ``data`` the specs do not name — is kept in
``extensions["roleplay_card"]`` (:data:`~roleplay.characters.cards.limits.CARD_EXTENSION`), so an
export puts each back where it came from: at ``data`` level in CCv3, inside that extension
in CCv2 (which has no slot for them, and which our import reads back the same way).

SillyTavern keeps a character's note (its "Character's Note") in
``extensions.depth_prompt`` ``{prompt, depth, role}``: it becomes the character's author's
note (in the chat at that depth), and an export writes the author's note back there.

``character_book`` is not a character field: the importer turns it into a worldbook bound
to the character, and the exporter embeds the bound books again (:mod:`.book`).
"""

from __future__ import annotations

import copy
from typing import Any

from roleplay.characters.cards.errors import invalid
from roleplay.characters.cards.limits import CARD_EXTENSION
from roleplay.characters.cards.report import OUTSIDE_DATA, CardReport
from roleplay.prompting.notes import MAX_NOTE_CHARS

# card field -> Character field
TEXT_FIELDS = {
    "name": "name",
    "description": "description",
    "personality": "personality",
    "scenario": "scenario",
    "first_mes": "first_message",
    "mes_example": "example_dialogues",
    "system_prompt": "system_prompt",
    "post_history_instructions": "post_history_instructions",
    "creator_notes": "creator_notes",
    "creator": "creator",
    "character_version": "character_version",
}
LIST_FIELDS = {"alternate_greetings": "alternate_greetings", "tags": "tags"}
CCV3_EXTRAS = (
    "nickname",
    "group_only_greetings",
    "creator_notes_multilingual",
    "source",
    "assets",
    "creation_date",
    "modification_date",
)
UNKNOWN = "unknown_fields"  # data-level fields no spec names, under CARD_EXTENSION
BOOK = "character_book"
# CCv1 (and SillyTavern's top-level copy of it) spells creator notes this way.
V1_ALIASES = {"creatorcomment": "creator_notes"}
CARD_FIELDS = frozenset({*TEXT_FIELDS, *LIST_FIELDS, *CCV3_EXTRAS, BOOK, "extensions"})
DEPTH_PROMPT = "depth_prompt"  # SillyTavern's character note
NOTE_ROLES = ("system", "user", "assistant")
SPEC_NAMES = {"ccv2": ("chara_card_v2", "2.0"), "ccv3": ("chara_card_v3", "3.0")}


def card_to_fields(card: dict[str, Any], spec: str, report: CardReport) -> dict[str, Any]:
    """The character fields of a card object (``spec`` from :func:`read.card_spec`)."""
    if spec == "ccv1":
        data = {V1_ALIASES.get(key, key): value for key, value in card.items()}
        report.warn("ccv1_card", "a CCv1 card: only its top-level fields exist")
    else:
        data = card["data"]
        _check_version(card, spec, report)
        for key, value in card.items():
            if key not in ("spec", "spec_version", "data"):
                report.drop(key, value, OUTSIDE_DATA)
    prefix = "" if spec == "ccv1" else "data."
    fields: dict[str, Any] = {}
    for card_name, ours in TEXT_FIELDS.items():
        if card_name in data:
            _text(fields, ours, data[card_name], prefix + card_name, report)
    for card_name, ours in LIST_FIELDS.items():
        if card_name in data:
            fields[ours] = _strings(data[card_name], prefix + card_name, report, ours == "tags")
            report.map(prefix + card_name, ours)
    extensions, extras = _extensions(data.get("extensions"), prefix, report)
    for key in CCV3_EXTRAS:
        if key == "group_only_greetings" and data.get(key) == []:
            continue  # the spec's default, which every CCv3 export writes anyway
        if key in data:
            extras[key] = copy.deepcopy(data[key])
            report.keep(prefix + key, f"extensions.{CARD_EXTENSION}.{key}")
    unknown = {key: value for key, value in data.items() if key not in CARD_FIELDS}
    for key, value in unknown.items():
        extras.setdefault(UNKNOWN, {})[key] = copy.deepcopy(value)
        report.keep(prefix + key, f"extensions.{CARD_EXTENSION}.{UNKNOWN}.{key}")
    if extras:
        extensions[CARD_EXTENSION] = extras
    fields["extensions"] = extensions
    note = note_of_depth_prompt(extensions.get(DEPTH_PROMPT))
    if note is not None:
        fields["author_note"] = note
        report.map(f"{prefix}extensions.{DEPTH_PROMPT}", "author_note")
    if BOOK in data and data[BOOK] is not None:
        report.map(prefix + BOOK, "worldbook")
    return fields


def note_of_depth_prompt(value: Any) -> dict[str, Any] | None:
    """SillyTavern's ``depth_prompt`` as an author's note, or None when it has no text."""
    if not isinstance(value, dict):
        return None
    text = value.get("prompt")
    if not isinstance(text, str) or not text.strip():
        return None
    depth = _whole_number(value.get("depth"), 4)
    role = value.get("role")
    return {
        "content": text[:MAX_NOTE_CHARS],
        "position": "in_chat",
        "depth": min(max(depth, 0), 1000),
        "frequency": 1,
        "role": role if role in NOTE_ROLES else "system",
    }


def _whole_number(value: Any, default: int) -> int:
    """A whole number as a card writes it: a number, or its text (``"2"``, ``"2.0"``)."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def depth_prompt_of_note(note: Any) -> dict[str, Any] | None:
    """An author's note as SillyTavern's ``depth_prompt`` (it has no other positions)."""
    if not isinstance(note, dict) or not str(note.get("content", "")).strip():
        return None
    return {
        "prompt": note["content"],
        "depth": note.get("depth", 4),
        "role": note.get("role", "system"),
    }


def _check_version(card: dict[str, Any], spec: str, report: CardReport) -> None:
    version = card.get("spec_version")
    try:
        number = float(version) if isinstance(version, str | int | float) else None
    except ValueError:
        number = None
    expected = float(SPEC_NAMES[spec][1])
    if number is not None and number > expected:
        report.warn(
            "newer_spec_version",
            f"spec_version {version} is newer than {SPEC_NAMES[spec][1]}: fields it adds are "
            "kept, not used",
        )


def _text(fields: dict[str, Any], ours: str, value: Any, where: str, report: CardReport) -> None:
    if value is None:
        value = ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        if ours == "name":
            raise invalid(f"{where} is not text", field=where)
        report.drop(where, value, "not text")
        return
    if not isinstance(value, str):
        report.warn("number_as_text", f"{where} is a number; stored as text")
        value = str(value)
    fields[ours] = value
    report.map(where, ours)


def _strings(value: Any, where: str, report: CardReport, tags: bool) -> list[str]:
    """A list of strings from a card list field (a lone string becomes a one-item list)."""
    if value is None:
        return []
    if isinstance(value, str) and tags:
        # SillyTavern splits a text of tags at its commas (``charaFormatData``).
        report.warn("text_as_list", f"{where} is text, not a list; read as comma-separated tags")
        value = value.split(",")
    elif isinstance(value, str):
        report.warn("text_as_list", f"{where} is text, not a list; read as one item")
        value = [value] if value.strip() else []
    if not isinstance(value, list):
        report.drop(where, value, "not a list")
        return []
    items: list[str] = []
    for index, item in enumerate(value):
        if not isinstance(item, str):
            report.drop(f"{where}[{index}]", item, "not text")
            continue
        if tags:
            item = item.strip()
            if not item or item in items:
                continue
        items.append(item)
    return items


def _extensions(
    value: Any, prefix: str, report: CardReport
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(extensions verbatim, our card extension taken out of them to be refilled)."""
    if value is None:
        return {}, {}
    if not isinstance(value, dict):
        report.drop(prefix + "extensions", value, "not an object")
        return {}, {}
    extensions = copy.deepcopy(value)
    report.map(prefix + "extensions", "extensions")
    extras = extensions.pop(CARD_EXTENSION, None)
    return extensions, extras if isinstance(extras, dict) else {}


def fields_to_card(
    fields: dict[str, Any], spec: str, book: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A ``chara_card_v2``/``chara_card_v3`` object of a character's fields.

    ``fields`` holds every key of :data:`TEXT_FIELDS`/:data:`LIST_FIELDS` values,
    ``extensions`` and optionally ``author_note``; ``book`` is a ``character_book`` object or None.
    """
    name, version = SPEC_NAMES[spec]
    data: dict[str, Any] = {card: fields.get(ours, "") for card, ours in TEXT_FIELDS.items()}
    data.update({card: list(fields.get(ours) or []) for card, ours in LIST_FIELDS.items()})
    extensions = copy.deepcopy(fields.get("extensions") or {})
    depth_prompt = depth_prompt_of_note(fields.get("author_note"))
    if depth_prompt is not None:
        extensions[DEPTH_PROMPT] = depth_prompt
    if spec == "ccv3":
        extras = extensions.pop(CARD_EXTENSION, None)
        extras = extras if isinstance(extras, dict) else {}
        unknown = extras.get(UNKNOWN)
        if isinstance(unknown, dict):
            data.update({k: v for k, v in unknown.items() if k not in CARD_FIELDS})
        data.update({key: extras[key] for key in CCV3_EXTRAS if key in extras})
        data.setdefault("group_only_greetings", [])
    if book is not None:
        data[BOOK] = book
    data["extensions"] = extensions
    return {"spec": name, "spec_version": version, "data": data}
