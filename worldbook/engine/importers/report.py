"""The import report: what was imported, what changed on the way, what will not run.

Operators read it before saving (the seed's preview step), so it lists every entry whose
meaning differs from the file: fields we do not carry, values we clamped, dynamic content we
do not execute. Values are shortened so one huge field cannot bloat the report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MAX_LOSSY = 2_000
MAX_VALUE_CHARS = 200


def summarize_value(value: Any) -> Any:
    """A JSON-safe, short rendering of ``value`` for the report."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value if len(value) <= MAX_VALUE_CHARS else value[:MAX_VALUE_CHARS] + "…"
    text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    if len(text) <= MAX_VALUE_CHARS:
        return json.loads(text)
    return text[:MAX_VALUE_CHARS] + "…"


@dataclass
class ImportReport:
    """Collects findings while a file is mapped; :meth:`to_dict` is the API shape."""

    format: str
    source_sha256: str
    entry_count: int = 0
    imported_count: int = 0
    lossy_mappings: list[dict[str, Any]] = field(default_factory=list)
    lossy_count: int = 0
    runtime_blocked: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)

    def lossy(self, entry_id: str | None, field_name: str, value: Any, reason: str) -> None:
        """Record a field whose value is not carried one to one into the native entry."""
        self.lossy_count += 1
        if len(self.lossy_mappings) < MAX_LOSSY:
            self.lossy_mappings.append(
                {
                    "entry_id": entry_id,
                    "field": field_name,
                    "value": summarize_value(value),
                    "reason": reason,
                }
            )

    def warn(self, code: str, message: str) -> None:
        self.warnings.append({"code": code, "message": message})

    def block(self, entry_id: str, title: str, reasons: list[str]) -> None:
        """Record an entry that needs a runtime we do not run (excluded from selection)."""
        self.runtime_blocked.append({"entry_id": entry_id, "title": title, "reasons": reasons})

    def to_dict(self) -> dict[str, Any]:
        warnings = list(self.warnings)
        if self.lossy_count > len(self.lossy_mappings):
            warnings.append(
                {
                    "code": "lossy_truncated",
                    "message": f"{self.lossy_count} lossy mappings; the first "
                    f"{len(self.lossy_mappings)} are listed",
                }
            )
        return {
            "format": self.format,
            "entry_count": self.entry_count,
            "imported_count": self.imported_count,
            "lossy_mappings": list(self.lossy_mappings),
            "lossy_count": self.lossy_count,
            "runtime_blocked_count": len(self.runtime_blocked),
            "runtime_blocked": list(self.runtime_blocked),
            "warnings": warnings,
            "source_sha256": self.source_sha256,
        }
