"""The macro engine: SillyTavern's ``{{...}}`` macros expanded in one linear pass.

Macro names are case-insensitive (``{{Char}}`` is ``{{char}}``); arguments, variable names
and outlet names keep their case. Every macro the engine knows:

==========================  ======================================================================
``{{char}}``                the character's name
``{{user}}``                the player's name (the persona's name when one is chosen)
``{{persona}}``             the persona's description               (card field, see below)
``{{description}}``         the character's description             (card field)
``{{personality}}``         the character's personality             (card field)
``{{scenario}}``            the character's scenario                (card field)
``{{mesExamples}}``         the character's example dialogues       (card field)
``{{getvar::name}}``        the caller's variable ``name`` (``language``, ``dioCompiledPrompt``,
                            ...); a variable the caller did not supply expands to nothing, as in
                            SillyTavern, and is listed in ``missing_variables`` so a capability
                            that needs it can fail with its own error
``{{outlet::name}}``        a placement slot: left exactly as written for
                            :mod:`roleplay.prompting.placement`, its name listed in ``outlets``
``{{time}}``                the injected ``now`` as ``3:07 PM``
``{{date}}``                the injected ``now`` as ``January 5, 2025``
``{{weekday}}``             ``Monday`` ... ``Sunday``                (beyond the issue, from ST)
``{{isotime}}``             ``15:07``                                (beyond the issue, from ST)
``{{isodate}}``             ``2025-01-05``                           (beyond the issue, from ST)
``{{random::a::b::c}}``     one of the options; also SillyTavern's ``{{random:a,b,c}}`` (commas,
                            items trimmed, ``\\,`` for a literal comma)
``{{roll::1d20}}``          dice ``NdM+K`` / ``NdM-K`` / ``dM`` / ``M`` (= ``1dM``), at most 100
                            dice of at most 1,000,000 sides and ``|K|`` <= 1,000,000; also
                            ``{{roll:1d20}}`` and ``{{roll 1d20}}``
``{{newline}}``             a line break                             (beyond the issue, from ST)
``{{noop}}``                nothing                                  (beyond the issue, from ST)
``{{// any text}}``         a comment: removed
==========================  ======================================================================

Anything else is left exactly as written and listed in ``unknown`` (the turn's trace shows
it): an unknown name, a known name with an argument it does not take (``{{char::x}}``) or
without one it needs (``{{getvar}}``), a roll that is not dice notation or is over the limits,
``{{time}}``/``{{date}}`` when no ``now`` was given, and a card field inside a card field.

**Why time and chance are injected.** ``now`` is a value, not a clock read here, so a preview
and a test see fixed text. ``random`` and ``roll`` draw from ``seed`` plus a counter of the
random/roll occurrences in scan order: a retry of the same turn (same seed, same text) expands
the same way, and two occurrences of ``{{roll::1d6}}`` in one text still differ. Callers that
expand several texts in one turn should make the seed name the text too (turn id + prompt
identifier), or equal macros in different prompts will draw the same values.

**Why one level.** The card fields may contain ``{{char}}`` or ``{{user}}`` (cards are written
that way), so the text of a card field is expanded once, with every macro but the card fields
themselves; what a macro inserts is never scanned again. A variable whose value is
``{{getvar::x}}`` therefore reaches the model as that text: nothing a player or an import
writes into a value can make the engine loop or grow without bound. The engine is linear in
the text plus the card fields (each card field is expanded at most once per call and reused);
:mod:`roleplay.prompting.syntax` explains the scan.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from console.failures import BadRequest
from roleplay.prompting.syntax import OUTLET, iter_macros, outlet_name, split_name

# Stable error code.
MACRO_INVALID_INPUT = "macro_invalid_input"

MAX_DICE = 100
MAX_SIDES = 1_000_000
MAX_MODIFIER = 1_000_000
MAX_FORMULA_CHARS = 64

# Lowercased macro name -> the MacroContext attribute holding that card field's text.
CARD_FIELDS: dict[str, str] = {
    "persona": "persona",
    "description": "description",
    "personality": "personality",
    "scenario": "scenario",
    "mesexamples": "mes_examples",
}
COMMENT = "//"
# Macros whose value changes from turn to turn: the clock's, and chance drawn from the
# turn's seed. A prompt using one is not part of the stable prefix (docs/prompt.md).
VOLATILE_MACROS = frozenset({"time", "date", "weekday", "isotime", "isodate", "random", "roll"})

_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_DICE = re.compile(r"([0-9]{0,3})d([0-9]{1,7})(?:([+-])([0-9]{1,7}))?", re.IGNORECASE)
_UNESCAPED_COMMA = re.compile(r"(?<!\\),")


class MacroInputError(BadRequest):
    """The engine was handed something that is not text (400 ``macro_invalid_input``);
    ``details.field`` names it. A caller's bug, reported rather than stringified."""

    default_code = MACRO_INVALID_INPUT


def _require_text(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise MacroInputError(
            message=f"{name} must be text, not {type(value).__name__}", details={"field": name}
        )


@dataclass(frozen=True)
class MacroContext:
    """What the macros expand to for one text of one turn. Every field is optional.

    ``now`` is the turn's reading of the clock, in the time zone the player should see.
    ``seed`` is the turn's seed for ``random``/``roll`` (see the module docstring).
    """

    char: str = ""
    user: str = ""
    persona: str = ""
    description: str = ""
    personality: str = ""
    scenario: str = ""
    mes_examples: str = ""
    variables: Mapping[str, str] = field(default_factory=dict)
    now: datetime | None = None
    seed: str = ""

    def __post_init__(self) -> None:
        for name in ("char", "user", "seed", *CARD_FIELDS.values()):
            _require_text(name, getattr(self, name))
        if not isinstance(self.variables, Mapping):
            raise MacroInputError(
                message="variables must be a mapping", details={"field": "variables"}
            )
        for key, value in self.variables.items():
            _require_text("variables", key)
            _require_text(f"variables.{key}", value)
        if self.now is not None and not isinstance(self.now, datetime):
            raise MacroInputError(message="now must be a datetime", details={"field": "now"})
        object.__setattr__(self, "variables", MappingProxyType(dict(self.variables)))


@dataclass(frozen=True)
class MacroResult:
    """The expanded text and what the trace should show about it.

    ``unknown``: macros left as written (their full text, ``{{foo}}``), each once, in order of
    first appearance. ``used``: lowercased names of the macros expanded (``//`` for comments).
    ``outlets``: outlet slot names seen, for the layout's ``outlets``. ``missing_variables``:
    ``getvar`` names the caller did not supply. All deduplicated, in order of first appearance.
    """

    text: str
    unknown: tuple[str, ...] = ()
    used: tuple[str, ...] = ()
    outlets: tuple[str, ...] = ()
    missing_variables: tuple[str, ...] = ()


def expand_macros(text: str, context: MacroContext) -> MacroResult:
    """Expand every macro of ``text`` once (card fields one level deeper); see the module."""
    _require_text("text", text)
    expander = _Expander(context)
    out = expander.expand(text, nested=False)
    return MacroResult(
        text=out,
        unknown=tuple(expander.unknown),
        used=tuple(expander.used),
        outlets=tuple(expander.outlets),
        missing_variables=tuple(expander.missing),
    )


def referenced_variables(text: str) -> tuple[str, ...]:
    """The ``getvar`` names of ``text`` in order, repeats included, without expanding.

    For rules a preset checks on save (``auto_reply`` must hold ``{{getvar::language}}``;
    exactly one ``{{getvar::systemPrompt}}`` placeholder across the prompts).
    """
    _require_text("text", text)
    names = []
    for macro in iter_macros(text):
        name, argument = split_name(macro.body)
        if name == "getvar" and argument is not None and argument.strip():
            names.append(argument.strip())
    return tuple(names)


# --- the expansion pass --------------------------------------------------------------------


def roll_dice(formula: str, rng: random.Random) -> str | None:
    """The total of dice notation ``NdM+K`` (or ``M`` for ``1dM``), ``None`` if malformed or
    over the limits (which bound the work a roll may cost)."""
    if len(formula) > MAX_FORMULA_CHARS:
        return None
    compact = "".join(formula.split())
    if compact.isascii() and compact.isdigit():
        compact = "1d" + compact
    match = _DICE.fullmatch(compact)
    if match is None:
        return None
    count = int(match.group(1) or "1")
    sides = int(match.group(2))
    modifier = int(match.group(4) or "0") * (-1 if match.group(3) == "-" else 1)
    if not (1 <= count <= MAX_DICE and 1 <= sides <= MAX_SIDES and abs(modifier) <= MAX_MODIFIER):
        return None
    return str(sum(rng.randint(1, sides) for _ in range(count)) + modifier)


def pick_option(argument: str, rng: random.Random) -> str | None:
    """One of ``a::b::c``, or of ``a, b, c`` (items trimmed, ``\\,`` a literal comma)."""
    if not argument:
        return None
    if "::" in argument:
        options = argument.split("::")
    else:
        options = [item.replace("\\,", ",").strip() for item in _UNESCAPED_COMMA.split(argument)]
    return options[rng.randrange(len(options))]


def _clock(render: Callable[[datetime], str]) -> Callable[[_Expander, str | None], str | None]:
    def handler(expander: _Expander, argument: str | None) -> str | None:
        now = expander.context.now
        return None if argument is not None or now is None else render(now)

    return handler


def _time(now: datetime) -> str:
    return f"{now.hour % 12 or 12}:{now.minute:02d} {'AM' if now.hour < 12 else 'PM'}"


def _constant(value: str) -> Callable[[_Expander, str | None], str | None]:
    return lambda _expander, argument: value if argument is None else None


class _Expander:
    """The state of one :func:`expand_macros` call: the random counter, the card fields
    already expanded, and what the result reports (dicts keep first-seen order)."""

    def __init__(self, context: MacroContext) -> None:
        self.context = context
        self.draws = 0
        self.fields: dict[str, str] = {}
        self.unknown: dict[str, None] = {}
        self.used: dict[str, None] = {}
        self.outlets: dict[str, None] = {}
        self.missing: dict[str, None] = {}

    def expand(self, text: str, *, nested: bool) -> str:
        parts: list[str] = []
        pos = 0
        for macro in iter_macros(text):
            value = self.value(macro.body, nested=nested)
            if value is None:
                self.unknown[text[macro.start : macro.end]] = None
                continue  # left as written: it stays inside the next literal slice
            parts.append(text[pos : macro.start])
            parts.append(value)
            pos = macro.end
        parts.append(text[pos:])
        return "".join(parts)

    def value(self, body: str, *, nested: bool) -> str | None:
        """What one macro becomes, or ``None`` to leave it as written (and report it)."""
        if body.lstrip().startswith(COMMENT):
            self.used[COMMENT] = None
            return ""
        name, argument = split_name(body)
        if name == OUTLET:
            return self.outlet(body)
        handler = _HANDLERS.get(name)
        if handler is None or (nested and name in CARD_FIELDS):
            return None
        value = handler(self, argument)
        if value is not None:
            self.used[name] = None
        return value

    def rng(self) -> random.Random:
        """A generator for the next random/roll occurrence: seed + occurrence counter.

        ``random.Random`` seeded with a string hashes it with SHA-512 (not ``hash()``), so
        the draws are the same in every process and on every run.
        """
        self.draws += 1
        return random.Random(f"{self.context.seed}\x1f{self.draws}")

    def card_field(self, name: str, argument: str | None) -> str | None:
        if argument is not None:
            return None
        if name not in self.fields:
            raw = getattr(self.context, CARD_FIELDS[name])
            self.fields[name] = self.expand(raw, nested=True)
        return self.fields[name]

    def getvar(self, argument: str | None) -> str | None:
        key = (argument or "").strip()
        if not key:
            return None
        found = self.context.variables.get(key)
        if found is None:
            self.missing[key] = None
            return ""
        return found

    def outlet(self, body: str) -> str | None:
        """An outlet marker stays exactly as written (``{{`` + body + ``}}`` is its text)."""
        slot = outlet_name(body)
        if slot is None:
            return None
        self.outlets[slot] = None
        self.used[OUTLET] = None
        return "{{" + body + "}}"


def _card(name: str) -> Callable[[_Expander, str | None], str | None]:
    return lambda expander, argument: expander.card_field(name, argument)


_HANDLERS: dict[str, Callable[[_Expander, str | None], str | None]] = {
    "char": lambda expander, argument: expander.context.char if argument is None else None,
    "user": lambda expander, argument: expander.context.user if argument is None else None,
    **{name: _card(name) for name in CARD_FIELDS},
    "getvar": _Expander.getvar,
    "time": _clock(_time),
    "date": _clock(lambda now: f"{_MONTHS[now.month - 1]} {now.day}, {now.year}"),
    "weekday": _clock(lambda now: _WEEKDAYS[now.weekday()]),
    "isotime": _clock(lambda now: f"{now.hour:02d}:{now.minute:02d}"),
    "isodate": _clock(lambda now: now.date().isoformat()),
    "random": lambda expander, argument: pick_option(argument or "", expander.rng()),
    "roll": lambda expander, argument: roll_dice(argument or "", expander.rng()),
    "newline": _constant("\n"),
    "noop": _constant(""),
}
