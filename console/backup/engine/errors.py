"""Why an archive was refused: one coded error per rule, raised by the pure reader."""

from __future__ import annotations

from console import failures


class ArchiveRefused(failures.BadRequest):
    """The upload is not a readable backup (400): ``archive_invalid`` (not a zip, truncated,
    a bad name or row), ``archive_version`` (another format version)."""

    default_code = "archive_invalid"


class ArchiveTooLarge(failures.TooLarge):
    """Over a cap on the entries or the inflated bytes (413 ``archive_too_large``)."""

    default_code = "archive_too_large"
