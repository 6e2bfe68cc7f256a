"""The card import report: which card field went where, what was kept aside, what was not.

Operators read it after an import (the console shows it on the character's page; the API
returns it), so every field of the card is accounted for once: *mapped* to a character
field, *kept* in ``extensions`` (no column of its own, given back on export), or *dropped*
with the reason. The embedded book's own report (the worldbook importer's) sits under
``book``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from worldbook.engine.importers.report import summarize_value

# Why a top-level field of a v2/v3 card is not read: SillyTavern writes a CCv1 copy of each
# field beside ``data`` (and a few of its own); the v2 fields are the ones used.
OUTSIDE_DATA = "outside the card's data (a CCv1 copy or a tool's own)"


@dataclass
class CardReport:
    """Collects findings while a card is read and mapped; :meth:`to_dict` is the API shape."""

    format: str
    source_sha256: str
    mapped: list[dict[str, str]] = field(default_factory=list)
    kept: list[dict[str, str]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)
    avatar: str = "none"
    book: dict[str, Any] | None = None

    def map(self, card_field: str, to: str) -> None:
        self.mapped.append({"card_field": card_field, "field": to})

    def keep(self, card_field: str, where: str) -> None:
        self.kept.append({"card_field": card_field, "kept_in": where})

    def drop(self, card_field: str, value: Any, reason: str) -> None:
        self.dropped.append(
            {"card_field": card_field, "value": summarize_value(value), "reason": reason}
        )

    def warn(self, code: str, message: str) -> None:
        self.warnings.append({"code": code, "message": message})

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "source_sha256": self.source_sha256,
            "mapped": list(self.mapped),
            "kept": list(self.kept),
            "dropped": list(self.dropped),
            "warnings": list(self.warnings),
            "avatar": self.avatar,
            "book": self.book,
        }


def summary(report: dict[str, Any]) -> dict[str, int]:
    """How an import report reads in one line: fields mapped, kept in extensions, CCv1
    copies ignored (the card's v2 fields were used) and fields not imported."""
    dropped = report.get("dropped") or []
    copies = sum(1 for item in dropped if item.get("reason") == OUTSIDE_DATA)
    return {
        "mapped": len(report.get("mapped") or []),
        "kept": len(report.get("kept") or []),
        "ccv1_copies": copies,
        "not_imported": len(dropped) - copies,
    }
