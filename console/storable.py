"""What PostgreSQL cannot store in text or jsonb: NUL characters and lone surrogates.

Such a string passes every validator and then fails inside psycopg as a 500; each capability
calls :func:`unstorable_at` before a write and raises its own 422 ``invalid_text``. Pure
Python, so engines may use it too.
"""

from __future__ import annotations

import json
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
