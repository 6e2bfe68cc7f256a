"""The caps an archive must stay under, in one place (``docs/backup.md``).

A zip states the sizes of its entries, but a crafted one can lie, so the reader checks the
stated sizes first and then counts the bytes it actually inflates."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    max_entries: int = 100_000
    max_total_bytes: int = 4 * 1024**3
    max_entry_bytes: int = 2 * 1024**3
    max_ratio: int = 200  # uncompressed / compressed, per entry over 1 MiB
    max_int_digits: int = 40


DEFAULT_LIMITS = Limits()
