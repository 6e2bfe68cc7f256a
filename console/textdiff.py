"""Line diffs of text for people: what the console shows when a worldbook entry or a memory
document changed. Pure Python."""

from __future__ import annotations

import difflib


def line_diff(old: str, new: str, context: int = 2) -> list[tuple[str, str]]:
    """A unified diff as ``(kind, text)`` rows: ``hunk``, ``ctx``, ``del`` or ``add``."""
    rows: list[tuple[str, str]] = []
    diff = difflib.unified_diff(
        old.split("\n"), new.split("\n"), lineterm="", n=context, fromfile="old", tofile="new"
    )
    for line in diff:
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            rows.append(("hunk", line))
        elif line.startswith("-"):
            rows.append(("del", line[1:]))
        elif line.startswith("+"):
            rows.append(("add", line[1:]))
        else:
            rows.append(("ctx", line[1:]))
    return rows
