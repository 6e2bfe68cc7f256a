"""Replace secrets and personal data with typed placeholders (seed 003: every memory write,
whatever its path, is scrubbed before it is stored).

Rules run in a fixed order, each on the output of the one before, so one secret is never
half-redacted by two rules: PEM blocks, passwords in URLs, our own API tokens, vendor API
keys, AWS keys, bearer tokens, card numbers, e-mail addresses, phone numbers.

Choices the spec leaves open:

- A secret glued to ASCII letters, digits or ``_`` is part of a longer word and left alone
  (``task-…`` holds no ``sk-`` key, ``ID13812345678`` is no phone); CJK text is not glue.
- ``user@localhost`` and other addresses without a dotted domain are not e-mails.
- A bearer token must look random (a digit or symbol, or mixed case after the first
  letter), so "the bearer responsibilities" stays prose.
- A card is a Luhn-valid window of 13-19 digits shaped as cards are printed (one group,
  fours with a short tail, Amex 4-6-5, Diners 4-6-4), starting with 2-6 as issuers' numbers
  do, so millisecond timestamps (``17…``) are not cards; it is found inside a longer run of
  numbers too ("qty 2 4111 1111 1111 1111"). After a ``+``, up to 15 digits are a phone.

Every pattern is linear: no nested quantifiers over the same characters, and each one that
starts with a repeated class is anchored by a lookbehind, so a failed attempt is not retried
from inside the same run. No rule matches inside a placeholder, and no match touches what a
rule before it looks at, so ``scrub`` is idempotent (the property tests check both).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

API_KEY = "api_key"
TOKEN = "token"
AWS_KEY = "aws_key"
PRIVATE_KEY = "private_key"
PASSWORD = "password"
EMAIL = "email"
PHONE = "phone"
CARD = "card"
KINDS = (API_KEY, TOKEN, AWS_KEY, PRIVATE_KEY, PASSWORD, EMAIL, PHONE, CARD)

MAX_VALUE_DEPTH = 1000  # scrub_value: far past any JSON we store; a cycle stops here


def placeholder(kind: str) -> str:
    """The text that replaces a secret of ``kind``: ``[redacted:<kind>]``."""
    return f"[redacted:{kind}]"


@dataclass(frozen=True)
class Scrubbed:
    """The scrubbed text and how many secrets of each kind it had (only kinds found)."""

    text: str
    found: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class _Rule:
    """A pattern whose group ``s`` (else the whole match) becomes the kind's placeholder,
    when ``accept`` agrees."""

    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[str], bool] | None = None

    def apply(self, text: str, counts: Counter[str]) -> str:
        mark = placeholder(self.kind)
        group = "s" if "s" in self.pattern.groupindex else 0

        def replace(m: re.Match[str]) -> str:
            secret = m.group(group)
            if secret == mark or (self.accept is not None and not self.accept(secret)):
                return m.group()
            counts[self.kind] += 1
            text = m.string
            return text[m.start() : m.start(group)] + mark + text[m.end(group) : m.end()]

        return self.pattern.sub(replace, text)


def _random_looking(token: str) -> bool:
    """A bearer token, not a word: a digit or symbol, or mixed case after the first letter."""
    if not token.isalpha():
        return True
    rest = token[1:]
    return not (rest.islower() or rest.isupper())


def _phone_digits(candidate: str) -> bool:
    """An international number has 8-15 digits, country code included."""
    return 8 <= sum(c.isdigit() for c in candidate) <= 15


_EDGE = r"A-Za-z0-9_"  # a secret glued to one of these is part of a longer word

_RULES_BEFORE_CARDS = (
    # A whole PEM block, to its matching END line or, unterminated, to the end of the text.
    _Rule(
        PRIVATE_KEY,
        re.compile(r"-----BEGIN ([A-Z0-9][A-Z0-9 ]{0,63})-----.*?(?:-----END \1-----|\Z)", re.S),
    ),
    # scheme://user:password@host: the password only (to the last @ of the authority).
    _Rule(
        PASSWORD,
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#\[\]]*:(?P<s>[^\s/?#]+)@"
        ),
    ),
    # Our own API tokens (console.models.ApiToken.generate).
    _Rule(TOKEN, re.compile(r"(?<![A-Za-z0-9_-])rpk_[0-9a-f]{8}_[A-Za-z0-9_-]{20,}")),
    # OpenAI/Anthropic-style sk- keys, GitHub and Slack tokens.
    _Rule(
        API_KEY,
        re.compile(
            r"(?<![A-Za-z0-9_-])(?:sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
            r"|github_pat_[A-Za-z0-9_]{20,}|xox[baprs]-[A-Za-z0-9-]{10,})"
        ),
    ),
    # AWS access key ids, and secret access keys where a label names them.
    _Rule(AWS_KEY, re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")),
    _Rule(
        AWS_KEY,
        re.compile(
            r"(?i:(?:aws_?)?secret_?access_?key)[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?P<s>[A-Za-z0-9/+=]{40,})"
        ),
    ),
    # "Bearer <token>": the word stays.
    _Rule(TOKEN, re.compile(r"(?i:bearer)[ \t]+(?P<s>[A-Za-z0-9._~+/=-]{16,})"), _random_looking),
)

# Digit groups joined by single spaces or dashes; card windows are looked for inside.
_DIGIT_RUN = re.compile(rf"(?<![{_EDGE}])[0-9]+(?:[ -][0-9]+)*(?![{_EDGE}])")
_DIGITS = re.compile(r"[0-9]+")
_GROUP_COUNTS = (5, 4, 3, 1)  # 4-4-4-4-x, 4-4-4-x, 4-6-x, one group: longest first

_RULES_AFTER_CARDS = (
    _Rule(
        EMAIL,
        re.compile(
            r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,63}"
            r"(?![A-Za-z0-9_%+@-]|\.+[A-Za-z0-9_%+@-])"  # nor run into a next local part
        ),
    ),
    # Mainland China mobiles, 1[3-9] and 9 digits, maybe (+)86-prefixed or split 3-4-4;
    # before the international rule, which then sees them redacted in every pass.
    _Rule(
        PHONE,
        re.compile(
            rf"(?<![{_EDGE}+])(?<![0-9][.-])(?:\+?86[ -]?)?1[3-9][0-9](?:[ -]?[0-9]{{4}}){{2}}"
            rf"(?![{_EDGE}+]|[.-][0-9])"
        ),
    ),
    # +<country> then groups split by a space, dot, dash or parentheses: 8-15 digits.
    _Rule(
        PHONE,
        re.compile(
            rf"(?<![{_EDGE}+])\+[0-9]+(?:(?:[ .-]?\(|\)[ .-]?|[ .-])[0-9]+)*"
            rf"(?![{_EDGE}+]|[ .()-]{{1,2}}[0-9])"
        ),
        _phone_digits,
    ),
)


_DOUBLED = (0, 2, 4, 6, 8, 1, 3, 5, 7, 9)  # a digit doubled, its digits summed


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum of a string of ASCII digits."""
    odd = sum(ord(c) - 48 for c in digits[-1::-2])
    even = sum(_DOUBLED[ord(c) - 48] for c in digits[-2::-2])
    return (odd + even) % 10 == 0


def _card_shaped(sizes: list[int]) -> bool:
    """Group sizes as cards are printed: one group, 4-6-4/4-6-5, or fours then a short tail."""
    if len(sizes) == 1 or sizes in ([4, 6, 4], [4, 6, 5]):
        return True
    return len(sizes) >= 4 and all(n == 4 for n in sizes[:-1]) and 1 <= sizes[-1] <= 4


def _card_end(groups: list[str], i: int, fewest: int) -> int | None:
    """The index of the last group of a card of at least ``fewest`` digits starting at group
    ``i``, if there is one."""
    if len(groups[i]) != 4 and not 13 <= len(groups[i]) <= 19:
        return None  # no card shape starts with this group: the common case, kept cheap
    for count in _GROUP_COUNTS:
        sizes = [len(g) for g in groups[i : i + count]]
        if len(sizes) < count or not fewest <= sum(sizes) <= 19 or not _card_shaped(sizes):
            continue
        digits = "".join(groups[i : i + count])
        if digits[0] in "23456" and luhn_valid(digits):
            return i + count - 1
    return None


def _scrub_cards(text: str, counts: Counter[str]) -> str:
    """Replace every card-shaped, Luhn-valid window of every run of digit groups."""
    mark = placeholder(CARD)

    def replace(m: re.Match[str]) -> str:
        run = m.group()
        if len(run) < 13:
            return run
        spans = [g.span() for g in _DIGITS.finditer(run)]
        groups = [run[a:b] for a, b in spans]
        after_plus = m.start() > 0 and m.string[m.start() - 1] == "+"
        parts, kept, i = [], 0, 0
        while i < len(groups):
            end = _card_end(groups, i, 16 if i == 0 and after_plus else 13)
            if end is None:
                i += 1
                continue
            parts += [run[kept : spans[i][0]], mark]
            kept = spans[end][1]
            counts[CARD] += 1
            i = end + 1
        return "".join(parts) + run[kept:] if parts else run

    return _DIGIT_RUN.sub(replace, text)


def scrub(text: str) -> Scrubbed:
    """``text`` with every secret replaced by its placeholder, and the count of each kind."""
    counts: Counter[str] = Counter()
    for rule in _RULES_BEFORE_CARDS:
        text = rule.apply(text, counts)
    text = _scrub_cards(text, counts)
    for rule in _RULES_AFTER_CARDS:
        text = rule.apply(text, counts)
    return Scrubbed(text, {kind: counts[kind] for kind in KINDS if counts[kind]})


def scrub_value(value: Any) -> tuple[Any, dict[str, int]]:
    """A copy of a JSON-like value with every string value and list item scrubbed (dict keys
    and non-string scalars are kept), and the count of each kind found.

    Walks with an explicit stack, so depth costs no recursion; past ``MAX_VALUE_DEPTH`` levels (a
    cycle, or an attack that skipped validation) it raises ``ValueError``.
    """
    counts: Counter[str] = Counter()

    def clean(item: Any, depth: int, stack: list[tuple[Any, Any, int]]) -> Any:
        if isinstance(item, str):
            result = scrub(item)
            counts.update(result.found)
            return result.text
        if isinstance(item, dict | list):
            if depth > MAX_VALUE_DEPTH:
                raise ValueError(f"value nested deeper than {MAX_VALUE_DEPTH} levels")
            copy: dict[Any, Any] | list[Any] = {} if isinstance(item, dict) else []
            stack.append((item, copy, depth))
            return copy
        return item

    stack: list[tuple[Any, Any, int]] = []
    root = clean(value, 1, stack)
    while stack:
        source, target, depth = stack.pop()
        if isinstance(source, dict):
            for key, item in source.items():
                target[key] = clean(item, depth + 1, stack)
        else:
            target.extend(clean(item, depth + 1, stack) for item in source)
    return root, {kind: counts[kind] for kind in KINDS if counts[kind]}
