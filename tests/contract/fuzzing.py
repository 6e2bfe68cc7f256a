"""The pieces of the schema fuzzer: the app in-process, the world's ids, and what to check.

Requests go through :class:`InProcessApp`, a WSGI application on Django's own test handler:
the same middleware, views and exception handler as production, in the test's thread and
database transaction, so every example sees the fixtures and is rolled back after.
"""

from __future__ import annotations

import logging
import traceback

import schemathesis
from django.core.signals import got_request_exception
from django.test.client import ClientHandler
from hypothesis import strategies as st
from schemathesis.specs.openapi import checks as openapi_checks


class InProcessApp:
    """WSGI over ``django.test.client.ClientHandler``; remembers the tracebacks of requests
    that raised (a 500's cause, for the failure message)."""

    def __init__(self) -> None:
        self.handler = ClientHandler(enforce_csrf_checks=False)
        self.tracebacks: list[str] = []

    def __call__(self, environ, start_response):
        response = self.handler(environ)
        headers = list(response.items())
        headers += [("Set-Cookie", morsel.OutputString()) for morsel in response.cookies.values()]
        start_response(f"{response.status_code} {response.reason_phrase}", headers)
        if response.streaming:
            return response.streaming_content
        return [response.content]

    def _record(self, sender=None, **kwargs) -> None:
        self.tracebacks.append(traceback.format_exc())

    def __enter__(self) -> InProcessApp:
        got_request_exception.connect(self._record)
        self._log = _TracebackHandler(self.tracebacks)
        logging.getLogger("console.errors").addHandler(self._log)
        return self

    def __exit__(self, *exc) -> None:
        got_request_exception.disconnect(self._record)
        logging.getLogger("console.errors").removeHandler(self._log)


class _TracebackHandler(logging.Handler):
    """Keeps the traceback of ``unhandled API error`` (the exception handler's own 500)."""

    def __init__(self, sink: list[str]) -> None:
        super().__init__(logging.ERROR)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.sink.append("".join(traceback.format_exception(*record.exc_info)))


# Body fields that name an object: the fuzzer sometimes puts a real id of the caller's
# tenant there, so validation gets past "no such object" into the rules behind it.
ID_FIELDS = {
    "player": lambda w: w.objects.player.pk,
    "character": lambda w: str(w.objects.character.pk),
    "model_config": lambda w: str(w.objects.model_config.pk),
    "persona": lambda w: str(w.objects.persona.pk),
    "preset": lambda w: str(w.objects.preset.pk),
    "conversation_id": lambda w: str(w.objects.conversation.pk),
    "book_id": lambda w: w.book_id,
    "revision": lambda w: w.revision,
    "expected_revision": lambda w: w.revision,
}


def plant_ids(value, world, draw) -> None:
    """Replace, where ``draw`` says so, id fields anywhere in a JSON body by real ids."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in list(node):
                if key in ID_FIELDS and draw(st.booleans()):
                    node[key] = ID_FIELDS[key](world)
                else:
                    stack.append(node[key])
        elif isinstance(node, list):
            stack.extend(node)


# Headers beyond the documented ones: an Idempotency-Key of any text a header can carry.
EXTRA_HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "Idempotency-Key": st.text(
            st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=220
        )
    },
)


@schemathesis.check
def error_format(ctx, response, case) -> None:
    """Every error answer is ``{"error": {"code", "message", "details"}}``."""
    if response.status_code < 400:
        return None
    body = response.json()
    error = body.get("error") if isinstance(body, dict) else None
    assert isinstance(error, dict) and set(error) == {"code", "message", "details"}, body
    assert isinstance(error["code"], str) and error["code"], body
    assert isinstance(error["message"], str) and error["message"], body
    return None


# Invalid input the API accepts, each a finding for the code that owns it, as
# ``{"why": predicate(case, mutation)}``: a case whose every mutation is one of these is not
# held against ``negative_data_rejection``; any other accepted invalid input still fails.
# None today.
KNOWN_LENIENCY: dict = {}


@schemathesis.check
def invalid_input_refused(ctx, response, case) -> bool | None:
    """``negative_data_rejection``, minus the leniencies listed in KNOWN_LENIENCY."""
    mutations = getattr(getattr(case.meta, "phase", None), "data", None)
    mutations = getattr(mutations, "mutations", ())
    if mutations and all(
        any(lenient(case, mutation) for lenient in KNOWN_LENIENCY.values())
        for mutation in mutations
    ):
        return None
    return openapi_checks.negative_data_rejection(ctx, response, case)


CHECKS = [
    schemathesis.checks.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_schema_conformance,
    openapi_checks.response_headers_conformance,
    invalid_input_refused,
    openapi_checks.ignored_auth,
    error_format,
]
