"""The file-import doors' one shape (a card, a chat file): one multipart ``file`` read within
its limit, an ``Idempotency-Key`` replay checked against the file's SHA-256 and the form's
fields, and the answer stored as its JSON text."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, ClassVar

from rest_framework.parsers import MultiPartParser
from rest_framework.utils import encoders
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.failures import FieldErrors
from console.idempotency import run_idempotent

# Multipart framing around the largest file.
FRAMING = 64 * 1024


def uploaded_file(request, field: str, limit: int) -> tuple[str, bytes]:
    """(name, bytes) of the one file in ``field``; more than ``limit`` bytes are not read."""
    files = request.FILES.getlist(field)
    if len(files) != 1:
        raise FieldErrors({field: [f"send exactly one file in the '{field}' field"]})
    upload = files[0]
    return upload.name or "upload", upload.read(limit + 1)


class FileImportView(BodyLimit, APIView):
    """Subclasses set ``max_file_bytes`` (the body may be that plus the multipart framing)
    and ``operation`` (the idempotency records' name)."""

    parser_classes = [MultiPartParser]
    max_file_bytes: ClassVar[int]
    operation: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.max_body_bytes = cls.max_file_bytes + FRAMING

    def received(self, request) -> tuple[str, bytes]:
        """(name, bytes) of the uploaded ``file``, at most one byte over the limit."""
        return uploaded_file(request, "file", self.max_file_bytes)

    def imported(self, request, data: bytes, fields: dict, work: Callable[[], tuple]):
        """``work() -> (body, status)`` run once per ``Idempotency-Key``, the replay checked
        against the file's SHA-256 and ``fields``."""
        fingerprint = {"file": hashlib.sha256(data).hexdigest(), **fields}

        def stored():
            body, status = work()
            # Stored as the record's JSON, so ids and times become their JSON text now.
            return json.loads(json.dumps(body, cls=encoders.JSONEncoder)), status

        return run_idempotent(request, self.operation, fingerprint, stored)
