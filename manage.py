#!/usr/bin/env python
"""Django's command-line utility for administrative tasks.

An entry point: unless ``DATABASE_URL`` / ``REDIS_URL`` name real servers, it starts or joins
the embedded PostgreSQL and Redis before Django loads (settings themselves start nothing).
Commands that never touch either start neither, so ``manage.py check`` starts no server.
"""

import os
import sys

# Commands that need neither the database nor Redis.
OFFLINE_COMMANDS = {
    "check",
    "collectstatic",
    "diffsettings",
    "help",
    "lint_imports",
    "makemigrations",
    "version",
    "--help",
    "-h",
    "--version",
}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    from console.embedded import ensure_environment

    ensure_environment(servers=command not in OFFLINE_COMMANDS)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
