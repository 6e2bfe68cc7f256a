"""What PostgreSQL cannot store in text or jsonb: NUL characters and lone surrogates.

Such a string passes every validator and then fails inside psycopg as a 500; each capability
calls :func:`unstorable_at` before a write and raises its own 422 ``invalid_text``. JSON
text a client types or sends outside the API's body parser (a console box, a socket frame)
is read by :func:`loads`, which holds the same bounds as that parser. Pure Python, so
engines may use it too.
"""

from __future__ import annotations

import json
import math
from typing import Any


def unstorable(text: str) -> str | None:
    """Why PostgreSQL cannot store ``text`` (text and jsonb refuse NUL and lone surrogates)."""
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate (not valid Unicode)"
    return None


def _plainly_storable(value: Any) -> bool:
    """True when no string in ``value`` can hold a NUL or a lone surrogate: its JSON text has
    no ``\\u0000`` escape (a NUL's; a text that merely spells it is sent to the walk too)
    and encodes as UTF-8 (a lone surrogate does not)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
        text.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        return False
    return "\\u0000" not in text


def unstorable_at(value: Any, where: str = "body") -> tuple[str, str] | None:
    """(path, message) of the first string (value or key) in ``value`` the database would
    reject, or None.

    The walk is iterative so a deeply nested value cannot exhaust the stack. It runs only
    when the value's JSON text shows a possible problem: for a 5,000-entry worldbook import
    the walk cost 0.45 s, the JSON text 30 ms.
    """
    if _plainly_storable(value):
        return None
    stack = [(where, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            problem = unstorable(item)
            if problem:
                return path, f"{path} {problem}"
        elif isinstance(item, dict):
            for key, child in item.items():
                key_text = str(key)
                problem = unstorable(key_text)
                if problem:
                    return path, f"a key in {path} {problem}"
                stack.append((f"{path}.{key_text}", child))
        elif isinstance(item, list | tuple):
            stack.extend((f"{path}.{i}", child) for i, child in enumerate(item))
    return None


MAX_JSON_DEPTH = 64
_INT64 = 2**63


def out_of_bounds(value: Any) -> str | None:
    """Why ``value`` (parsed JSON) is past what the API and the database take, or None:
    nested deeper than :data:`MAX_JSON_DEPTH`, an integer outside 64 bits (it breaks the
    renderer), or a number that is not finite (jsonb refuses it). An iterative walk."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_JSON_DEPTH:
                return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, bool):
            continue
        elif isinstance(item, int) and not -_INT64 <= item < _INT64:
            return "JSON integer outside the 64-bit range"
        elif isinstance(item, float) and not math.isfinite(item):
            return "JSON number out of range"
    return None


class UnstorableText(ValueError):
    """JSON that parses, with a string (value or key) the database cannot store."""


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def loads(text: str | bytes, where: str = "JSON") -> Any:
    """The value of JSON text a client sent (a console box, a socket frame), which the
    database can store and the renderer can write; ``ValueError`` naming what is wrong.

    ``json.loads`` alone lets through what later fails as a server error: a value nested
    past the interpreter's recursion limit (``RecursionError``, not a ``ValueError``),
    ``NaN`` and ``1e400`` (jsonb refuses them), a 30-digit integer, and the ``\\u0000`` and
    lone-surrogate escapes PostgreSQL cannot store (:class:`UnstorableText`)."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    problem = out_of_bounds(value)
    if problem is not None:
        raise ValueError(problem)
    found = unstorable_at(value, where)
    if found is not None:
        raise UnstorableText(found[1])
    return value
