"""What a command run on a fresh checkout does before touching the database."""

from __future__ import annotations

from django.core.management import call_command


def migrate_quietly() -> None:
    """Apply any unapplied migrations: ``make run`` and every benchmark start from whatever
    state the database is in (a fresh checkout has none), never from a traceback."""
    call_command("migrate", interactive=False, verbosity=0)
