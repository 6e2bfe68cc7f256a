"""Rewriting the ids a value names, from the source tenant's rows to the restored ones.

UUIDs are unique across tables, so any UUID in a text or JSON value (``"character:<uuid>"``,
a message id in a trace, the tenant's prefix of a file name) is rewritten when it names a
restored row, and reported when it names nothing restored. Integer ids are not: a JSON value
holds one only where a path declared for its column says so (``inputs.entry_ids[]``), with
the table it names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


class Remapper:
    """``uuids`` maps source UUID text (lower case) to the restored one; ``ints`` maps a table
    label to ``{source id: restored id}``. ``unmapped`` collects what named nothing restored."""

    def __init__(self, uuids: Mapping[str, str], ints: Mapping[str, Mapping[int, int]]) -> None:
        self.uuids = uuids
        self.ints = ints
        self.unmapped: set[str] = set()

    def text(self, value: str) -> str:
        if "-" not in value:
            return value
        return UUID.sub(self._sub, value)

    def _sub(self, match: re.Match[str]) -> str:
        found = match.group(0)
        new = self.uuids.get(found.lower())
        if new is None:
            self.unmapped.add(found.lower())
            return found
        return new

    def json(self, value: Any) -> Any:
        """``value`` with every UUID it names rewritten (dict keys too)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {self.text(key): self.json(item) for key, item in value.items()}
        return value

    def int_paths(self, value: Any, paths: Mapping[str, str]) -> Any:
        """``value`` with the integer ids at each declared path (``a.b[]``, ``a[].id``)
        mapped through the table the path names; one that names nothing is reported."""
        for path, label in paths.items():
            fix = partial(self._int, table=self.ints.get(label, {}), label=label)
            value = _at_path(value, path.split("."), fix)
        return value

    def _int(self, old: Any, table: Mapping[int, int], label: str) -> Any:
        if isinstance(old, bool) or not isinstance(old, int):
            return old
        if old in table:
            return table[old]
        self.unmapped.add(f"{label}:{old}")
        return old


def _at_path(value: Any, steps: list[str], fix: Callable[[Any], Any]) -> Any:
    if not steps:
        return fix(value)
    step, rest = steps[0], steps[1:]
    each = step.endswith("[]")
    key = step[:-2] if each else step
    if key:
        if not isinstance(value, dict) or key not in value:
            return value
        inner = value[key]
        if each:
            inner = [_at_path(i, rest, fix) for i in inner] if isinstance(inner, list) else inner
        else:
            inner = _at_path(inner, rest, fix)
        return {**value, key: inner}
    if each and isinstance(value, list):
        return [_at_path(i, rest, fix) for i in value]
    return value
