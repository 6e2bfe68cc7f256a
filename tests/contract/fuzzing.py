"""The pieces of the schema fuzzer: the app in-process, the world's ids, and what to check.

Requests go through :class:`InProcessApp`, a WSGI application on Django's own test handler:
the same middleware, views and exception handler as production, in the test's thread and
database transaction, so every example sees the fixtures and is rolled back after.
"""

from __future__ import annotations

import logging
import re
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
    "image_config": lambda w: str(w.objects.image_config.pk),
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

# What an attacker puts where a schema says "string": text that is valid JSON but not valid
# Unicode (a lone surrogate has no UTF-8 form), and text PostgreSQL cannot store (NUL).
# And text far past any length limit (a field's max_length, a page's body limit).
POISON = st.sampled_from(["\ud800", "\udfff", "\x00", "\udbff\udc00\ud800", "x" * 300_000])
# Where a schema says "integer": the edges of 64 bits, negatives, a float, and beyond 64 bits.
ODD_NUMBERS = st.sampled_from([-1, 0, 2**31, 2**63 - 1, -(2**63), 1.5, 2.0, 1e300, 10**30])
# Path and query text (a URL cannot carry a lone surrogate; the client refuses to send one).
ODD_PARAMS = st.sampled_from(
    ["\x00", "a\x00b", "..%2F..%2Fetc", "../..", "-1", "1e400", "99999999999999999999999",
     "0x10", " ", "é" * 300, "\u202e", "%ff", "[]", "{}", "null"]
)  # fmt: skip
# Charsets a Content-Type may name that no request can be read with: codecs from bytes to
# bytes or text to text, text codecs that fail on plain ASCII, unknown names, and UTF-16
# (not ASCII-compatible: a query string read with it is noise). And a query to read.
ODD_CHARSETS = ["zlib", "base64", "hex", "uu", "rot13", "punycode", "idna", "utf-16",
                "utf-32", "bogus", "x" * 300]  # fmt: skip
ODD_QUERY = "q=%41%00%FF&page=%ED%A0%80&limit=1e309"
# Cookies no browser sends: a session key of the right length holding a NUL (PostgreSQL
# cannot compare it), one far too long, and Latin-1 bytes where a token goes.
ODD_COOKIES = [
    "sessionid=abcdefghijklmnop\x00; csrftoken=\xff" + "c" * 31,
    "sessionid=" + "a" * 5000 + "; django_language=\x00",
    "sessionid=ABCDEFGH%00{}; =;;=",
]
# Any text a header can carry (Latin-1, NUL included; a server strips the white space
# around it), for each documented header.
HEADER_TEXT = (
    st.text(st.characters(max_codepoint=0xFF, exclude_characters="\r\n"), max_size=220)
    .map(str.strip)
    .filter(bool)
)


def _poisoned(text: str, draw) -> str:
    at = draw(st.integers(0, len(text)))
    return text[:at] + draw(POISON) + text[at:]


def hostile(value, draw, depth: int = 0):
    """``value`` (a valid body) turned hostile here and there: poison in strings and keys,
    list items duplicated (a unique rule behind the list), odd numbers where numbers go,
    and a value nested just under the parser's depth limit."""
    sometimes = st.integers(0, 3).map(lambda n: n == 0)  # one time in four
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return _poisoned(value, draw) if draw(sometimes) else value
    if isinstance(value, int | float):
        return draw(ODD_NUMBERS) if draw(sometimes) else value
    if isinstance(value, list):
        items = [hostile(item, draw, depth + 1) for item in value]
        if items and draw(st.booleans()):
            again = draw(st.sampled_from(items))
            again = _respelled(again) if draw(st.booleans()) else again
            items.insert(draw(st.integers(0, len(items))), again)
        return items
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            new_key = _poisoned(key, draw) if draw(sometimes) and draw(sometimes) else key
            out[new_key] = hostile(item, draw, depth + 1)
        if depth == 0 and draw(sometimes) and draw(sometimes):
            deep = draw(st.sampled_from(list(out) or ["deep"]))
            out[deep] = _nested(60 - depth, out.get(deep))
        return out
    return value


_UUID = re.compile(r"[0-9a-f]{8}-?([0-9a-f]{4}-?){3}[0-9a-f]{12}", re.I)


def _respelled(value):
    """``value`` with every UUID in it spelled another way (upper case): the same object
    under another text, past a check that compares texts."""
    if isinstance(value, str):
        return value.upper() if _UUID.fullmatch(value) else value
    if isinstance(value, list):
        return [_respelled(item) for item in value]
    if isinstance(value, dict):
        return {key: _respelled(item) for key, item in value.items()}
    return value


def _nested(levels: int, inner):
    for _ in range(levels):
        inner = [inner]
    return inner


def hostile_params(params: dict | None, draw) -> None:
    """Path or query parameters, some replaced by text no id or number parses as."""
    for name in list(params or {}):
        if draw(st.integers(0, 2)) == 0:
            params[name] = draw(ODD_PARAMS)


def send_raw(case, headers: dict):
    """The case through Django's test client, its body as JSON text with ``\\u`` escapes
    (so a lone surrogate is sent as a client spells it) and every path parameter quoted:
    schemathesis's own transport refuses to serialize a lone surrogate."""
    import json
    from urllib.parse import quote

    from django.test import Client

    path = case.operation.path
    for name, value in (case.path_parameters or {}).items():
        path = path.replace("{" + name + "}", quote(str(value), safe=""))
    query = {k: v for k, v in (case.query or {}).items() if v is not None}
    meta = {"HTTP_" + name.upper().replace("-", "_"): value for name, value in headers.items()}
    body = case.body if isinstance(case.body, dict | list) else None
    return Client().generic(
        case.method.upper(),
        path + ("?" + _urlencode(query) if query else ""),
        json.dumps(body) if body is not None else "",
        content_type="application/json",
        **meta,
    )


def _urlencode(query: dict) -> str:
    from urllib.parse import urlencode

    return urlencode(query, doseq=True, encoding="utf-8", errors="surrogatepass")


def hostile_headers(operation, draw) -> dict:
    """Every documented header (and the token's) with any text a header can carry; the
    documented ones are sent most of the time, so a poisoned body meets an Idempotency-Key."""
    documented = {
        parameter.name
        for parameter in operation.headers
        if parameter.name.lower() != "authorization"
    }
    headers = {}
    for name in sorted(documented | {"Idempotency-Key"}):
        if draw(st.integers(0, 3)) != 0:
            headers[name] = draw(HEADER_TEXT)
    if draw(st.integers(0, 7)) == 0:
        headers["Authorization"] = draw(st.sampled_from(["Bearer ", "Bearer \x00", "Basic \xff"]))
        headers["Authorization"] += draw(HEADER_TEXT)
    return headers


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


# --- the chat socket's frames ----------------------------------------------------------
# Where a frame's value goes, an attacker puts any JSON value: poison text, odd numbers
# (NaN and infinities too: JSON text may spell them), empty and nested containers, and a
# value nested past the readers' 64 levels. Frames are sent as JSON text with ``\u``
# escapes, as a browser's ``JSON.stringify`` spells a lone surrogate.
FRAME_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    ODD_NUMBERS,
    st.sampled_from([float("nan"), float("inf"), 2**64, -(2**63) - 1]),
    POISON,
    st.text(max_size=12),
    st.sampled_from([[], {}, ["x"], {"\ud800": 1}, _nested(70, 1)]),
)
# Frames that are not a frame object at all: a binary frame, text that is not JSON, JSON
# that is not an object, nested past any limit, and JSON tokens a strict reader refuses.
ODD_FRAMES = st.sampled_from(
    [b"\x00\xff", " ", "not json", "[1, 2]", "null", '"x"', "NaN", '{"type": Infinity}',
     "[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000, '{"\\ud800": 1}']
)  # fmt: skip


def frame_fields() -> list[str]:
    """The names the socket reads from a frame (``data.get("...")`` in its modules), read
    from the consumer's code: a field added there is fuzzed the day it is."""
    import inspect

    from roleplay.sockets import consumers, group_frames

    source = inspect.getsource(consumers) + inspect.getsource(group_frames)
    return sorted(set(re.findall(r"data\.get\(\"(\w+)\"", source)) - {"type"})


def hostile_frames(kinds: list[str], fields: list[str], ids: dict[str, list[str]]):
    """One frame as the text a socket client sends: a known ``type`` with some fields set to
    hostile values (or, where ``ids`` has them, to real ids so the frame gets past the
    lookups), or one of :data:`ODD_FRAMES`."""
    import json

    def frame(kind: str, values: dict) -> str:
        return json.dumps({"type": kind, **values})

    real = st.sampled_from(sorted(ids)).flatmap(
        lambda name: st.tuples(st.just(name), st.sampled_from(ids[name]))
    )
    values = st.dictionaries(st.sampled_from(fields), FRAME_VALUES, max_size=4)
    planted = st.lists(real, max_size=2).map(dict) if ids else st.just({})
    framed = st.builds(
        lambda kind, odd, good: frame(kind, {**odd, **good}),
        st.sampled_from(kinds),
        values,
        planted,
    )
    return st.one_of(framed, framed, framed, ODD_FRAMES)


# --- the console's pages and forms -----------------------------------------------------
# Query text for any page (a list's search, its page number, a filter), and what goes into
# a form's text boxes: NUL, lone-surrogate escapes where a box holds JSON, JSON nested past
# any limit, NaN and numbers past 64 bits, and text far past a field's length.
HOSTILE_QUERY = {"q": "a\x00b", "page": "99999999999999999999", "sort": "\x00", "status": "\x00"}
HOSTILE_BOXES = [
    "\x00",
    '{"a":' * 3000 + "1" + "}" * 3000,
    "[" * 5000 + "]" * 5000,
    '{"a": NaN, "b": 1e400, "c": 100000000000000000000000000000}',
    '{"a": "\\u0000", "\\ud800": "\\udfff"}',
    "99999999999999999999",
    "x" * 200_000,
]


def page_forms(html: str) -> list[tuple[str, dict[str, str], list[str]]]:
    """The POST forms of a page: (action, the values it would send, its text boxes)."""
    from html.parser import HTMLParser

    forms: list[tuple[str, dict[str, str], list[str]]] = []

    class Reader(HTMLParser):
        box: str | None = None

        def handle_starttag(self, tag, attrs):
            a = {k: v or "" for k, v in attrs}
            if tag == "form":
                self.form = (a.get("action", ""), {}, []) if a.get("method") == "post" else None
                if self.form is not None:
                    forms.append(self.form)
            form = getattr(self, "form", None)
            if form is None or not a.get("name"):
                return
            kind = a.get("type", "text")
            if tag == "input" and kind in ("checkbox", "radio") and "checked" not in a:
                return
            if tag == "input" and kind != "file":
                form[1].setdefault(a["name"], a.get("value", ""))
                if kind in ("text", "number", "search", "url", "email", "hidden"):
                    form[2].append(a["name"])
            elif tag == "textarea":
                form[1].setdefault(a["name"], "")
                form[2].append(a["name"])
            elif tag == "select":
                self.box = a["name"]
            elif tag == "option" and self.box and ("selected" in a or self.box not in form[1]):
                form[1][self.box] = a.get("value", "")

        def handle_endtag(self, tag):
            if tag == "form":
                self.form = None
            if tag == "select":
                self.box = None

    Reader().feed(html)
    return [form for form in forms if form[1] or form[2]]
