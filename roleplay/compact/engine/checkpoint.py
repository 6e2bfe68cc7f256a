"""A compaction checkpoint and its read-back checks (seed 002, Compact).

A checkpoint holds the summary, the first and last covered message ids, how many messages
it covers and their content fingerprint, the semantic fingerprint of the character and the
config it was made under, and its format version. Reading one back is not "use it if it
exists": the format version must be known, the config fingerprint equal, the summary within
its size and protocol; when both covered end messages are in the history the count and the
content fingerprint must match; at least the covered **end** message must still be there.
Any failure means the checkpoint is not continued from."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring as _quote  # JSON string, non-ASCII kept

FORMAT_VERSION = 1
FORMATS = ("structured_json", "plain_text")


@dataclass(frozen=True)
class Checkpoint:
    version: int
    summary: dict  # {format: plain_text, text} | {format: structured_json, canonical, ...}
    first_id: str
    last_id: str
    covered_count: int
    fingerprint: str
    config_fingerprint: str
    format_version: int = FORMAT_VERSION
    chain: int | None = None


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str = ""
    # Whether the history changed under it (edit, rollback, regenerate, delete): an
    # invalidation, as opposed to a checkpoint this build cannot read at all.
    history_changed: bool = False


def fingerprint(messages: Sequence) -> str:
    """The covered messages' ids, roles and texts."""
    digest = hashlib.sha256()
    for m in messages:  # json.dumps([id, role, content], ensure_ascii=False), twice as fast
        digest.update(f"[{_quote(str(m.id))}, {_quote(m.role)}, {_quote(m.content)}]".encode())
    return digest.hexdigest()


def config_fingerprint(**parts: object) -> str:
    raw = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()


def summary_text(summary: dict) -> str:
    """The summary as the Actor reads it."""
    if summary.get("format") == "plain_text":
        return str(summary.get("text") or "")
    parts = [
        ("Canonical facts", summary.get("canonical")),
        ("Relationship and interaction", summary.get("interaction")),
        ("Open threads", summary.get("open_threads")),
    ]
    lines = []
    for label, value in parts:
        items = value if isinstance(value, list) else [value] if value else []
        if items:
            lines.append(label + ":")
            lines += [f"- {item}" for item in items]
    return "\n".join(lines)


def verify(
    checkpoint: Checkpoint,
    history: Sequence,
    *,
    config_fp: str,
    output_format: str,
    max_summary_tokens: int,
    count_tokens: Callable[[str], int],
    ids: Sequence[str] | None = None,
) -> Verdict:
    """``ids``: the history's message ids as strings, when the caller has them already."""
    if checkpoint.format_version != FORMAT_VERSION:
        return Verdict(False, "unknown_format_version")
    if checkpoint.summary.get("format") not in FORMATS:
        return Verdict(False, "unknown_summary_format")
    if checkpoint.summary.get("format") != output_format:
        return Verdict(False, "protocol_changed")
    if checkpoint.config_fingerprint != config_fp:
        return Verdict(False, "config_changed", history_changed=True)
    if count_tokens(summary_text(checkpoint.summary)) > max_summary_tokens:
        return Verdict(False, "summary_too_large")
    ids = ids if ids is not None else [str(m.id) for m in history]
    if checkpoint.last_id not in ids:
        return Verdict(False, "covered_end_missing", history_changed=True)
    end = ids.index(checkpoint.last_id)
    if checkpoint.first_id in ids:
        start = ids.index(checkpoint.first_id)
        covered = list(history[start : end + 1])
        if len(covered) != checkpoint.covered_count:
            return Verdict(False, "covered_count_changed", history_changed=True)
        if fingerprint(covered) != checkpoint.fingerprint:
            return Verdict(False, "covered_content_changed", history_changed=True)
    return Verdict(True)


def intact(
    checkpoint: Checkpoint,
    history: Sequence,
    earlier: Callable[[int], Checkpoint | None],
    ids: Sequence[str] | None = None,
) -> Verdict:
    """Whether the messages ``checkpoint`` covers are unchanged in ``history``: the whole
    stored conversation, not a turn's window, so a covered message older than the window
    counts too. A version saved while its first covered message had left the window holds
    a chained fingerprint (:func:`successor`): it is checked through the versions it
    extends (``earlier(version)``), each over the messages it added."""
    ids = ids if ids is not None else [str(m.id) for m in history]
    place = {message_id: i for i, message_id in enumerate(ids)}
    current: Checkpoint | None = checkpoint
    while current is not None:
        end = place.get(current.last_id)
        if end is None:
            return Verdict(False, "covered_end_missing", history_changed=True)
        start = place.get(current.first_id)
        if start is not None and start <= end:
            span = history[start : end + 1]
            if len(span) == current.covered_count and fingerprint(span) == current.fingerprint:
                return Verdict(True)
        previous = earlier(current.chain) if current.chain is not None else None
        if previous is None or not _extends(current, previous, history, place):
            return Verdict(False, "covered_content_changed", history_changed=True)
        current = previous
    return Verdict(False, "covered_content_changed", history_changed=True)


def _extends(current: Checkpoint, previous: Checkpoint, history: Sequence, place: dict) -> bool:
    """Whether ``current``'s chained fingerprint is ``previous``'s and the messages after
    ``previous``'s end (up to ``current``'s) as ``history`` holds them; a version over the
    same messages (an operator's edit, a restored version) carries ``previous``'s own."""
    if previous.last_id == current.last_id:
        return (previous.fingerprint, previous.covered_count) == (
            current.fingerprint,
            current.covered_count,
        )
    start, end = place.get(previous.last_id), place[current.last_id]
    if start is None or start >= end:
        return False
    added = history[start + 1 : end + 1]
    chained = config_fingerprint(earlier=previous.fingerprint, more=fingerprint(added))
    return (chained, previous.covered_count + len(added)) == (
        current.fingerprint,
        current.covered_count,
    )


def after(checkpoint: Checkpoint, history: Sequence, ids: Sequence[str] | None = None) -> list:
    """The history messages the checkpoint does not cover (those after its end)."""
    ids = ids if ids is not None else [str(m.id) for m in history]
    return list(history[ids.index(checkpoint.last_id) + 1 :])


def successor(
    current: Checkpoint | None,
    history: Sequence,
    folded: Sequence,
    summary: dict,
    *,
    config_fp: str,
    expected: int,
) -> Checkpoint:
    """The checkpoint after ``current`` (None: the first) whose ``summary`` covers what
    ``current`` covered and then ``folded`` (the oldest groups of ``history`` after it),
    as version ``expected + 1``."""
    first_id = current.first_id if current else str(folded[0].id)
    last_id = str(folded[-1].id)
    ids = [str(m.id) for m in history]
    if first_id in ids:
        span = list(history[ids.index(first_id) : ids.index(last_id) + 1])
        count, content = len(span), fingerprint(span)
    else:  # the first covered message is older than the history: chain the fingerprints
        assert current is not None
        count = current.covered_count + len(folded)
        content = config_fingerprint(earlier=current.fingerprint, more=fingerprint(folded))
    return Checkpoint(
        version=expected + 1,
        summary=summary,
        first_id=first_id,
        last_id=last_id,
        covered_count=count,
        fingerprint=content,
        config_fingerprint=config_fp,
        chain=current.version if current else None,
    )
