"""Background consolidation (seed 004), pure: its settings, which pending messages make a
batch, the model request, and the checks a model's answer must pass before anything of it
is written.

A batch is at most ``batch_messages`` (12) of the player's own messages in one conversation
(so one persona), taken oldest first from the newest ``max_pending`` (32) waiting ones: a
buffer that overflows keeps the newer messages. Each source text is cut to
:data:`MAX_SOURCE_CHARS`. The model returns at most ``max_candidates`` (5) candidates, each
citing real message ids of the batch and a contiguous span of their text (copied verbatim).
Any candidate that fails a check rejects the **whole** batch: a citation of an unknown
message, of another conversation or persona, a quote that is not in its message, a
``shared`` candidate whose sources hold no explicit "for everyone" statement, a kind, scope
or length out of bounds, too many candidates. What passes is only ever a ``candidate`` for
a person to review: evidence shows where a summary came from, not that it is right.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from console.failures import Invalid
from memory.engine.entries import max_chars
from memory.errors import MemoryInvalid

MAX_SOURCE_CHARS = 1000  # seed 004: one source message, at most
KINDS = ("preference", "agreement", "context", "fact")
SCOPES = ("persona", "session", "shared")
TEMPERATURE = 0.2


@dataclass(frozen=True)
class Settings:
    """The ``consolidation`` object of the memory settings (off by default, seed 004)."""

    enabled: bool = False
    interval_minutes: int = 5  # waiting messages are taken at least this often
    early_messages: int = 8  # ... or at once when this many of one conversation wait
    batch_messages: int = 12
    max_candidates: int = 5
    max_pending: int = 32  # the waiting buffer per conversation; the newer are kept
    dedupe_similarity: float = 0.92  # cosine at or above which a candidate is a repeat
    timeout_ms: int = 60_000  # the model call, retries included


RANGES: dict[str, tuple[float, float]] = {
    "interval_minutes": (1, 1440),
    "early_messages": (1, 32),
    "batch_messages": (1, 12),
    "max_candidates": (1, 5),
    "max_pending": (1, 32),
    "dedupe_similarity": (0.5, 1.0),
    "timeout_ms": (5_000, 180_000),
}
FIELDS = tuple(f.name for f in fields(Settings))


def _invalid(name: str, message: str) -> MemoryInvalid:
    field = f"consolidation.{name}"
    return MemoryInvalid("validation_error", f"{field}: {message}", {"field": field})


def check_settings(data: Any) -> dict[str, Any]:
    """``data`` as stored (only the fields it names); raises naming the first bad field."""
    if not isinstance(data, dict):
        raise MemoryInvalid(
            "validation_error",
            "consolidation: must be an object or null",
            {"field": "consolidation"},
        )
    for name in data:
        if name not in FIELDS:
            raise _invalid(str(name)[:100], "unknown field")
    for name, value in data.items():
        if name == "enabled":
            if not isinstance(value, bool):
                raise _invalid(name, "must be true or false")
            continue
        low, high = RANGES[name]
        whole = name != "dedupe_similarity"
        kinds = (int,) if whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
            what = "an integer" if whole else "a number"
            raise _invalid(name, f"must be {what} from {low:g} to {high:g}")
    return dict(data)


def settings_of(data: Mapping[str, Any] | None) -> Settings:
    known = {name: value for name, value in (data or {}).items() if name in FIELDS}
    return Settings(**known)


def as_dict(settings: Settings) -> dict[str, Any]:
    return asdict(settings)


@dataclass(frozen=True)
class Source:
    """One message of a batch: its id, its text (cut), its store timestamp."""

    id: str
    text: str
    ts: int


def source(message_id: str, content: str, ts: int) -> Source:
    return Source(str(message_id), content[:MAX_SOURCE_CHARS], int(ts))


def pick_batch(pending: Sequence[Source], settings: Settings) -> list[Source]:
    """The batch to take from the waiting messages (oldest first): the oldest
    ``batch_messages`` of the newest ``max_pending``."""
    window = list(pending)[-settings.max_pending :]
    return window[: settings.batch_messages]


SYSTEM = (
    "You read a player's own messages from a roleplay chat and note what is worth "
    "remembering about the player for later conversations: how they want replies written "
    "(preference), what they agreed with the character (agreement), their situation in "
    "this story (context), and lasting facts about them (fact). Only what the player "
    "clearly says counts: no guesses, nothing from the character's side, nothing said "
    "about other people, nothing said as an example, a question or a hypothetical. A plan "
    "stays a plan. Each candidate cites one or more of the given message ids and, for "
    "each, a quote copied exactly, character for character, from that message. Scope: "
    '"session" for this conversation only, "persona" for this character, "shared" only '
    "when the player says explicitly that it holds for every character. At most "
    "{max} candidates; each content is one short sentence in the player's language. "
    'Answer with JSON only: {{"candidates": [...]}}; an empty list when nothing qualifies.'
)


def schema(max_candidates: int) -> dict[str, Any]:
    """The JSON schema of the model's answer."""
    evidence = {
        "type": "object",
        "properties": {"message_id": {"type": "string"}, "quote": {"type": "string"}},
        "required": ["message_id", "quote"],
        "additionalProperties": False,
    }
    candidate = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": list(KINDS)},
            "scope": {"type": "string", "enum": list(SCOPES)},
            "content": {"type": "string"},
            "evidence": {"type": "array", "items": evidence, "minItems": 1},
        },
        "required": ["kind", "scope", "content", "evidence"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "candidates": {"type": "array", "items": candidate, "maxItems": max_candidates}
        },
        "required": ["candidates"],
        "additionalProperties": False,
    }


def request(
    batch: Sequence[Source], *, user: str, character: str, max_candidates: int
) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """The model's messages and its ``response_format`` for ``batch``."""
    lines = "\n".join(f"[{item.id}] {json.dumps(item.text, ensure_ascii=False)}" for item in batch)
    messages = [
        {"role": "system", "content": SYSTEM.format(max=max_candidates)},
        {
            "role": "user",
            "content": f"Messages of the player {user} in a chat with {character}, "
            f"one per line as [message id] followed by its text as a JSON string:\n\n{lines}",
        },
    ]
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "memory_candidates", "schema": schema(max_candidates)},
    }
    return messages, response_format


class Unparsable(ValueError):
    """The model's answer is not the JSON asked for: a model failure (the batch is kept)."""


class Rejected(Invalid, ValueError):
    """A candidate failed a check: the whole batch is refused (a coded ``invalid``
    failure; ``detail`` is its message)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(code, detail)
        self.detail = detail


@dataclass(frozen=True)
class Span:
    message_id: str
    start: int
    end: int


@dataclass(frozen=True)
class Candidate:
    kind: str
    scope: str
    content: str
    spans: tuple[Span, ...]


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def parse(reply: str, key: str = "candidates") -> list[Any]:
    """The ``key`` list of the model's JSON answer (a code fence around it is allowed)."""
    fenced = _FENCE.match(reply or "")
    text = fenced.group(1) if fenced else (reply or "").strip()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise Unparsable(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        raise Unparsable(f'not an object with a "{key}" list')
    return data[key]


def cited_ids(raw: Sequence[Any]) -> set[str]:
    """Every message id the answer cites (to look up the ones outside the batch)."""
    out: set[str] = set()
    for item in raw:
        for cite in item.get("evidence", ()) if isinstance(item, dict) else ():
            if isinstance(cite, dict) and isinstance(cite.get("message_id"), str):
                out.add(cite["message_id"])
    return out


# An explicit statement that something holds for every character (seed 004: a shared
# candidate needs one in its sources).
_FOR_EVERYONE = re.compile(
    r"\b(?:for|with|to)\s+(?:all|every|each|any)\s+(?:of\s+)?(?:you|the\s+)?"
    r"(?:characters?|personas?|bots?|of\s+you)\b"
    r"|\b(?:all|every|any)\s+(?:characters?|personas?|bots?)\b"
    r"|\beveryone\b|\beverybody\b|\bglobally\b|\beverywhere\b"
    r"|所有(?:人格|角色|人)|全部(?:人格|角色)|每个(?:人格|角色)|任何角色|全局|大家",
    re.I,
)


def says_for_everyone(text: str) -> bool:
    return bool(_FOR_EVERYONE.search(text))


def check(
    raw: Sequence[Any],
    batch: Sequence[Source],
    *,
    elsewhere: Mapping[str, str] | None = None,
    max_candidates: int = 5,
) -> list[Candidate]:
    """The candidates of a parsed answer, each with its spans located; raises
    :class:`Rejected` (the whole batch) on the first failed check. ``elsewhere`` maps a
    cited id outside the batch to ``cross_conversation`` or ``cross_persona`` when it is a
    message of the player's elsewhere (else it is ``unknown_message``)."""
    if len(raw) > max_candidates:
        raise Rejected("too_many_candidates", f"{len(raw)} candidates, at most {max_candidates}")
    by_id = {item.id: item for item in batch}
    out = []
    for index, item in enumerate(raw):
        where = f"candidates[{index}]"
        if not isinstance(item, dict) or set(item) - {"kind", "scope", "content", "evidence"}:
            raise Rejected("invalid_candidate", f"{where}: not a candidate object")
        kind, scope, content = item.get("kind"), item.get("scope"), item.get("content")
        if kind not in KINDS or scope not in SCOPES:
            raise Rejected("invalid_candidate", f"{where}: unknown kind or scope")
        if kind == "agreement" and scope == "shared":
            raise Rejected("invalid_candidate", f"{where}: an agreement is with one character")
        if not isinstance(content, str) or not content.strip():
            raise Rejected("invalid_candidate", f"{where}: no content")
        if len(content.strip()) > max_chars(kind):
            raise Rejected("invalid_candidate", f"{where}: content over {max_chars(kind)} chars")
        cites = item.get("evidence")
        if not isinstance(cites, list) or not cites:
            raise Rejected("missing_evidence", f"{where}: cites no message")
        spans = tuple(_locate(cite, by_id, elsewhere or {}, where) for cite in cites)
        if scope == "shared" and not any(
            says_for_everyone(by_id[s.message_id].text) for s in spans
        ):
            raise Rejected(
                "shared_without_statement",
                f"{where}: shared, but its sources say nothing of every character",
            )
        out.append(Candidate(kind, scope, " ".join(content.split()), spans))
    return out


def _locate(cite: Any, by_id: Mapping[str, Source], elsewhere: Mapping[str, str], where) -> Span:
    if not isinstance(cite, dict) or not isinstance(cite.get("message_id"), str):
        raise Rejected("invalid_evidence", f"{where}: evidence without a message id")
    message_id, quote = cite["message_id"], cite.get("quote")
    found = by_id.get(message_id)
    if found is None:
        code = elsewhere.get(message_id, "unknown_message")
        raise Rejected(code, f"{where}: cites {message_id[:64]!r}, not a message of the batch")
    if not isinstance(quote, str) or not quote.strip():
        raise Rejected("invalid_evidence", f"{where}: evidence without a quote")
    quote = quote.strip()
    start = found.text.find(quote)
    if start < 0 and len(found.text.lower()) == len(found.text):
        start = found.text.lower().find(quote.lower())
    if start < 0:
        raise Rejected("quote_mismatch", f"{where}: the quote is not in message {message_id}")
    return Span(message_id, start, start + len(quote))
