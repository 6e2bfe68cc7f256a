"""A console page's answer to a write a service refused: the reason flashed to the operator,
and the HTTP status of the error's kind (``console.failures.HTTP_STATUS``, the one mapping),
so a refused form is never a 500."""

from __future__ import annotations

from django.contrib import messages as flash

from console.failures import HTTP_STATUS, DomainError


def refused(request, exc: DomainError, *, stale: str = "", nothing_changed: bool = True) -> int:
    """Flash why ``exc`` refused the write; its status. ``stale``: the message for a
    ``version_conflict`` (``{current}``: the version now); any other refusal is its message,
    as "Nothing was changed: …." unless ``nothing_changed`` is False."""
    if stale and exc.code == "version_conflict":
        flash.error(request, stale.format(current=exc.details.get("current_version")))
    elif nothing_changed:
        flash.error(request, f"Nothing was changed: {exc.message}.")
    else:
        flash.error(request, exc.message)
    return HTTP_STATUS[exc.kind]
