"""What a memory entry may hold (seeds 003 and 004): the fields a write names, checked before
it is scrubbed and stored. Pure."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from memory.errors import MemoryInvalid

KINDS = ("preference", "agreement", "context", "episode", "fact", "belief")
SHORT_KINDS = ("preference", "agreement", "context")  # at most 240 characters (seed 004)
SCOPES = ("shared", "persona", "session")
# Of these kinds an owner has one active entry per scope, character, conversation and
# category: a newer one supersedes the older (the services, and the table's unique index).
SUPERSEDING_KINDS = ("preference", "agreement")
MAX_SHORT_CHARS = 240
MAX_LONG_CHARS = 4000
MAX_TAGS = 16
MAX_TAG_CHARS = 40
MAX_CATEGORY_CHARS = 100
_CATEGORY = re.compile(r"[a-z0-9][a-z0-9_.:-]*\Z")


def _invalid(code: str, field: str, message: str) -> MemoryInvalid:
    return MemoryInvalid(code, message, {"field": field})


def check_version(value: Any, what: str, hint: str = "") -> int:
    """A row's current ``version`` as a write names it (compare-and-set): an integer ≥ 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise MemoryInvalid(
            "invalid_version", f"version must be the {what}'s current version{hint}"
        )
    return value


def max_chars(kind: str) -> int:
    return MAX_SHORT_CHARS if kind in SHORT_KINDS else MAX_LONG_CHARS


def check_content(kind: str, content: Any) -> str:
    """Non-blank text within the kind's length (counted after scrubbing, by the caller too)."""
    if not isinstance(content, str) or not content.strip():
        raise _invalid("invalid_content", "content", "content must be non-blank text")
    limit = max_chars(kind)
    if len(content) > limit:
        raise MemoryInvalid(
            "content_too_long",
            f"a {kind} holds at most {limit} characters; this one has {len(content)}",
            {"field": "content", "max_chars": limit, "chars": len(content)},
        )
    return content


def check_fields(
    *,
    kind: Any,
    scope: Any,
    category_key: Any,
    tags: Any,
    character_id: str,
    session_id: str,
) -> tuple[str, ...]:
    """The kind, scope, category and tags of an entry; the tags as a tuple, deduplicated in
    order. A persona entry names its character, a session entry its conversation."""
    if kind not in KINDS:
        raise _invalid("invalid_kind", "kind", f"kind must be one of {', '.join(KINDS)}")
    if scope not in SCOPES:
        raise _invalid("invalid_scope", "scope", f"scope must be one of {', '.join(SCOPES)}")
    if kind == "agreement" and scope == "shared":
        raise _invalid(
            "agreement_not_shared",
            "scope",
            "an agreement is made with a character: its scope is persona or session",
        )
    if scope == "persona" and not character_id:
        raise _invalid("scope_needs_character", "character", "a persona entry names its character")
    if scope == "session" and not session_id:
        raise _invalid(
            "scope_needs_conversation", "conversation", "a session entry names its conversation"
        )
    if not isinstance(category_key, str) or (
        category_key
        and (len(category_key) > MAX_CATEGORY_CHARS or not _CATEGORY.match(category_key))
    ):
        raise _invalid(
            "invalid_category",
            "category_key",
            f"category_key is up to {MAX_CATEGORY_CHARS} of a-z 0-9 _ . : - (or empty)",
        )
    return check_tags(tags)


def check_tags(tags: Any) -> tuple[str, ...]:
    if not isinstance(tags, Sequence) or isinstance(tags, str):
        raise _invalid("invalid_tags", "tags", "tags must be a list of strings")
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip() or len(tag) > MAX_TAG_CHARS:
            raise _invalid(
                "invalid_tags", "tags", f"a tag is non-blank text of at most {MAX_TAG_CHARS}"
            )
        if tag.strip() not in out:
            out.append(tag.strip())
    if len(out) > MAX_TAGS:
        raise _invalid("invalid_tags", "tags", f"at most {MAX_TAGS} tags")
    return tuple(out)


def content_hash(content: str) -> str:
    """What duplicate detection compares: the text with its white space folded, lower case."""
    folded = " ".join(content.split()).casefold()
    return hashlib.sha256(folded.encode("utf-8", "surrogatepass")).hexdigest()
