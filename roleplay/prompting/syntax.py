"""The ``{{...}}`` macro syntax: where macros are in a text, found in one linear scan.

Both the macro engine and context placement read outlet markers, so the one rule of what a
macro is lives here and they can never disagree (an outlet marker the macro engine left in
place that placement fails to see would reach the model verbatim).

The rule: a macro is ``{{`` + body + ``}}`` where the body is the text up to the *first*
``}}`` and holds no ``{{`` of its own. When openers pile up (``{{a {{char}}``), the last
opener before the close wins and the earlier ones are plain text, as SillyTavern's regular
expressions read them. A body may span lines.

Why a hand-written scan rather than a regular expression: the scan below is obviously linear.
Each step searches forward for an opener, forward for the next closer, and back from that
closer to the last opener; the next step starts after the closer, so every character is
examined at most three times. An input with no closer at all (100k unclosed ``{{``) costs
one failed search and ends the scan. Nothing backtracks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

OPEN = "{{"
CLOSE = "}}"
OUTLET = "outlet"


class Macro(NamedTuple):
    """One macro occurrence: ``text[start:end] == "{{" + body + "}}"``."""

    start: int
    end: int
    body: str


def iter_macros(text: str) -> Iterator[Macro]:
    """Every macro of ``text``, left to right, never overlapping (see the module docstring)."""
    pos = 0
    while True:
        opener = text.find(OPEN, pos)
        if opener < 0:
            return
        closer = text.find(CLOSE, opener + 2)
        if closer < 0:
            return
        start = text.rfind(OPEN, opener, closer)
        yield Macro(start, closer + 2, text[start + 2 : closer])
        pos = closer + 2


def outside_macros(text: str) -> str:
    """``text`` with every macro taken out: what it says whatever its macros expand to."""
    parts, pos = [], 0
    for macro in iter_macros(text):
        parts.append(text[pos : macro.start])
        pos = macro.end
    parts.append(text[pos:])
    return "".join(parts)


def split_name(body: str) -> tuple[str, str | None]:
    """``(name, argument)`` of a macro body; the name lowercased (macro names are
    case-insensitive, as in SillyTavern) and the argument ``None`` when there is none.

    The argument follows ``::`` (``getvar::x``), or a single ``:`` as in SillyTavern's older
    forms (``random:a,b``, ``roll:1d20``). A body with neither has no argument, except that
    ``roll 1d20`` (a space) is also SillyTavern's.
    """
    head, sep, rest = body.partition(":")
    if not sep:
        name, space, formula = body.strip().partition(" ")
        if space and name.lower() == "roll":
            return "roll", formula
        return body.strip().lower(), None
    if rest.startswith(":"):
        rest = rest[1:]
    return head.strip().lower(), rest


def outlet_name(body: str) -> str | None:
    """The slot name when ``body`` is an outlet marker (``outlet::name``), else ``None``.

    The name is stripped of surrounding white space and keeps its case; an empty name is not
    a marker (the macro engine reports it as unknown).
    """
    name, argument = split_name(body)
    if name != OUTLET or argument is None:
        return None
    slot = argument.strip()
    return slot or None


def outlet_markers(text: str) -> Iterator[tuple[Macro, str]]:
    """Every outlet marker of ``text`` with its slot name, left to right."""
    for macro in iter_macros(text):
        slot = outlet_name(macro.body)
        if slot is not None:
            yield macro, slot
