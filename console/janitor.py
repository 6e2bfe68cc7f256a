"""``python -m console.janitor KIND DIRECTORY [OPTION]``: stops an embedded server nobody uses.

Started beside a server by the process that started it (``console.embedded``), in a session
of its own so that killing that process, or its whole process group, leaves the janitor
running. Once a second it drops dead pids from the server's users file; when none is left it
stops the server and exits. One janitor per server: a second one finds the lock held and
leaves at once.
"""

from __future__ import annotations

import fcntl
import sys
import time

from console.embedded import from_spec

POLL_SECONDS = 1.0


def main(spec: list[str]) -> int:
    server = from_spec(spec)
    marker = server.directory.with_name(server.directory.name + ".janitor")
    with open(marker, "a") as held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another janitor watches this server
        while True:
            time.sleep(POLL_SECONDS)
            try:
                if server.reap():
                    return 0
            except Exception:  # a passing failure (a file being rewritten): try again
                continue


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
