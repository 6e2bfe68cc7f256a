"""The server's request class: Django's, minus the charsets a request cannot be read with.

Django takes the ``charset`` of a ``Content-Type`` whenever ``codecs.lookup`` knows its name,
and decodes the query string and form bodies with it. But ``codecs`` also knows codecs from
bytes to bytes (``zlib``, ``base64``, ``hex``, ``uu``), from text to text (``rot13``) and
text codecs that fail on plain ASCII (``idna``, ``punycode``): a request carrying
``Content-Type: application/json; charset=zlib`` and a query string raised ``LookupError``
while Django built the request, before any middleware or error handler (a 500 from the
server itself). A charset counts here only where it reads ASCII as ASCII; any other is
ignored, so the request is read as UTF-8 and a body that is not UTF-8 is refused as such.
"""

from __future__ import annotations

import codecs
from functools import lru_cache

from django.core.handlers.asgi import ASGIRequest
from django.utils.http import parse_header_parameters

# Printable ASCII, led by the prefix that makes ``idna`` decode a label as punycode.
_ASCII = b"xn--" + bytes(range(0x20, 0x7F))


@lru_cache(maxsize=64)
def readable(charset: str) -> bool:
    """Whether ``charset`` decodes bytes to text and reads printable ASCII unchanged."""
    try:
        return codecs.decode(_ASCII, charset) == _ASCII.decode("ascii")
    except Exception:  # noqa: BLE001 - any codec's own failure (zlib.error, binascii.Error...)
        return False


class Request(ASGIRequest):
    """``ASGIRequest`` whose ``encoding`` is only ever a :func:`readable` charset."""

    def _set_content_type_params(self, meta):
        self.content_type, self.content_params = parse_header_parameters(
            meta.get("CONTENT_TYPE", "")
        )
        charset = self.content_params.get("charset")
        if charset and readable(charset):
            self.encoding = charset
