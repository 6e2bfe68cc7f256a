"""The Agentic RP State: the persistent notes Agent V2's Director writes, as a text format.

The seed's Director writes one whole state text, never a patch: a fixed header, then fixed
sections in a fixed order (current scene, goals, the flexible main line... the directions
the user declined), each ``Label:`` followed by its notes. Two checks read the format:

- a preset's ``director`` template must show it (``roleplay.prompting.presets``: "an
  explicit state header and sections when loaded"): the header, then every label followed
  by ``:``, in this order;
- Agent V2 checks each state the Director writes against the same constants (with its own
  length bounds), so the template and the check cannot drift apart.

The seed names the sections in Chinese and quotes two in English (``Current scene:`` and
``Open callbacks, promises, items, injuries, and deadlines:``); the others are translated
in the same style. :func:`split_sections` reads a state back into its sections for people (the
console shows each label with its notes). Pure.
"""

from __future__ import annotations

import re

DIRECTOR_STATE_HEADER = "[Agentic RP State]"
DIRECTOR_STATE_SECTIONS = (
    "Current scene",
    "Character life and near-term goals",
    "Flexible main line",
    "Possible future developments",
    "Relationships and pronoun ownership",
    "Knowledge boundaries",
    "Locations and access limits",
    "New character arrivals",
    "Time and off-screen life",
    "Open callbacks, promises, items, injuries, and deadlines",
    "Scene focus",
    "Character initiative",
    "Facts to keep",
    "Directions the user declined",
)


def state_format_problems(text: str) -> str:
    """What ``text`` lacks of the state header and its sections in order, in words; empty
    when it has them all."""
    start = text.find(DIRECTOR_STATE_HEADER)
    if start < 0:
        return f"the state header {DIRECTOR_STATE_HEADER} is missing"
    pos = start + len(DIRECTOR_STATE_HEADER)
    missing, misplaced = [], []
    for section in DIRECTOR_STATE_SECTIONS:
        label = f"{section}:"
        found = text.find(label, pos)
        if found >= 0:
            pos = found + len(label)
        elif label in text:
            misplaced.append(section)
        else:
            missing.append(section)
    parts = []
    if missing:
        parts.append("missing sections: " + ", ".join(missing))
    if misplaced:
        parts.append("sections out of order: " + ", ".join(misplaced))
    return "; ".join(parts)


# A line that opens a section: the label at the start of the line (after blanks, and the
# list or heading marks a model may add), then ``:``. Longest labels first, so a label that
# starts another one never takes its place.
_SECTION_START = re.compile(
    r"^[ \t]*(?:[-*#>]+[ \t]*)*(?P<label>"
    + "|".join(re.escape(s) for s in sorted(DIRECTOR_STATE_SECTIONS, key=len, reverse=True))
    + r"):[ \t]*",
    re.MULTILINE,
)


def split_sections(text: str | None) -> list[tuple[str | None, str]]:
    """``text`` as ``(label, notes)`` pairs in the order it has them: each line that opens
    with a known label and ``:`` starts a section, whose notes run to the next one. What
    comes before the first label (the header, anything unparseable) is one pair whose label
    is None, kept as written; a text with no label at all is that one pair."""
    if not text:
        return []
    starts = list(_SECTION_START.finditer(text))
    pairs: list[tuple[str | None, str]] = []
    head = text[: starts[0].start()] if starts else text
    if head.strip():
        pairs.append((None, head.strip("\n").rstrip()))
    for n, match in enumerate(starts):
        end = starts[n + 1].start() if n + 1 < len(starts) else len(text)
        pairs.append((match.group("label"), text[match.end() : end].strip()))
    return pairs
