"""Request bodies over a view's size limit are refused before they are parsed.

Every API view has a ``max_body_bytes`` (the seed's 48 MiB for worldbook batches, 2 MiB for
the runtime's small resources) and answers a bigger ``Content-Length`` with 413
``payload_too_large`` naming the limit, before authentication work, parsing or any query.
``tests/limits`` sends a body at and one byte over the limit of every API route.
"""

from __future__ import annotations

from console.failures import TooLarge

RUNTIME_MAX_BODY_BYTES = 2 * 1024 * 1024


class BodyLimit:
    """Mixin for DRF views: ``max_body_bytes`` is this view's limit."""

    max_body_bytes: int = RUNTIME_MAX_BODY_BYTES

    def initial(self, request, *args, **kwargs):
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isdigit() and int(length) > self.max_body_bytes:
            raise TooLarge(
                "payload_too_large",
                f"request body is larger than {self.max_body_bytes} bytes",
                {"max_bytes": self.max_body_bytes},
            )
        super().initial(request, *args, **kwargs)
