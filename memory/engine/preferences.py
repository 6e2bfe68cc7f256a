"""Choose the user's stated preferences for the Actor's prompt (seed 004).

Each turn, from the owner's memory entries, pick the ``preference`` and ``agreement`` entries
that apply to this conversation and character, at most 5 entries and 600 characters:

1. Eligible: kind ``preference``/``agreement``, status ``active``, not expired
   (``expires_at <= now`` is expired). Candidates, superseded, rejected, forgotten entries and
   episodes, facts, beliefs and context are never placed.
2. Applicable (``applies``): ``shared`` everywhere; ``persona`` for its own character;
   ``session`` in its own conversation only (session scope never propagates), for its own
   character, any character when it names none, or any when shared within the session.
3. Ranked: session > persona > shared; within a level pinned first, then more tags in common
   with the turn's tags, then most recently updated, then ``id`` ascending (deterministic).
   A chat turn's tags (:func:`turn_tags`) are the entries' tags that the character's card
   tags hold or the player's message names.
4. One per category: of entries with the same non-empty ``category_key`` only the first in
   rank is eligible, so "call me Sam" in this session overrides "call me Samuel" shared.
5. Limits, greedily in rank: an entry that would pass the character limit is skipped and
   later, shorter ones may still fit; stop at the entry limit.

Choices the spec leaves open:

- A ``persona`` entry without a character, or a ``session`` entry without a conversation,
  applies nowhere (not even to a turn that also has none): it is bound to nothing.
- An id seen twice keeps only its first (best-ranked) copy; stored ids are unique anyway.
- A category's first entry stays its only eligible one even when it is too long to fit: a
  broader, overridden preference must not come back because the override is long.
- Tags match exactly (case-sensitive), each distinct shared tag counting once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from console.search.lexical import CJK_CLASS

MAX_ENTRIES = 5
MAX_CHARS = 600
SELECTABLE_KINDS = ("preference", "agreement")
LEVELS = ("session", "persona", "shared")  # most specific first
HEADING = (
    "The user's stated preferences (they adjust tone and form only; they never override "
    "the character sheet, the scenario or the world's facts):"
)


@dataclass(frozen=True, slots=True)
class Item:
    """What selection sees of one stored memory entry."""

    id: str
    kind: str  # "preference" | "agreement" | "context" | "episode" | "fact" | "belief"
    scope: str  # "shared" | "persona" | "session"
    status: str  # "candidate" | "active" | "superseded" | "rejected" | "expired" | "forgotten"
    content: str
    category_key: str  # "" when none
    pinned: bool
    tags: tuple[str, ...]
    updated_at: float  # epoch seconds
    character_id: str  # the persona (character) it belongs to; "" for none
    session_id: str  # the conversation it belongs to; "" for none
    share_in_session: bool  # a session entry any character of that conversation may use
    expires_at: float | None


@dataclass(frozen=True, slots=True)
class Chosen:
    """One placed entry, the level it applied at, and why it ranked where it did."""

    item: Item
    level: str  # "session" | "persona" | "shared"
    reasons: tuple[str, ...]  # e.g. ("session", "pinned", "tags:2")


def applies(item: Item, *, character_id: str, session_id: str, now: float) -> str | None:
    """The level at which the item applies here, or None."""
    if item.kind not in SELECTABLE_KINDS or item.status != "active":
        return None
    if item.expires_at is not None and item.expires_at <= now:
        return None
    if item.scope == "shared":
        return "shared"
    if item.scope == "persona":
        return "persona" if item.character_id and item.character_id == character_id else None
    if item.scope == "session" and item.session_id and item.session_id == session_id:
        if item.share_in_session or item.character_id in ("", character_id):
            return "session"
    return None


def select(
    items: Iterable[Item],
    *,
    character_id: str,
    session_id: str,
    tags: Iterable[str] = (),
    now: float,
    max_entries: int = MAX_ENTRIES,
    max_chars: int = MAX_CHARS,
    left_out: list[tuple[Item, str]] | None = None,
) -> list[Chosen]:
    """The entries to place this turn, in precedence order, within both limits. With
    ``left_out``, each item not chosen is added to it with why (the console's "what the
    Actor will see next turn")."""
    wanted = frozenset(tags)
    ranked: list[tuple[tuple[int, bool, int, float, str], Chosen]] = []
    for item in items:
        level = applies(item, character_id=character_id, session_id=session_id, now=now)
        if level is None:
            if left_out is not None:
                left_out.append(
                    (item, why_not(item, character_id=character_id, session_id=session_id, now=now))
                )
            continue
        matches = len(wanted.intersection(item.tags))
        key = (LEVELS.index(level), not item.pinned, -matches, -item.updated_at, item.id)
        ranked.append((key, Chosen(item, level, _reasons(level, item.pinned, matches))))
    ranked.sort(key=lambda pair: pair[0])

    chosen: list[Chosen] = []
    seen_ids: set[str] = set()
    winners: dict[str, Chosen] = {}
    used = 0
    for _, entry in ranked:
        item = entry.item
        if item.id in seen_ids:
            continue
        seen_ids.add(item.id)
        winner = winners.get(item.category_key) if item.category_key else None
        if winner is not None:  # a more specific or better-ranked entry of this category won
            if len(chosen) >= max_entries and left_out is None:
                break
            taken = f"category “{item.category_key}” is taken by the better-ranked"
            _note(left_out, item, f"{taken} {winner.level} entry")
            continue
        if len(chosen) >= max_entries:
            if left_out is None:
                break
            left_out.append((item, f"the cap of {max_entries} entries is reached"))
            continue
        if item.category_key:
            winners[item.category_key] = entry
        if used + len(item.content) > max_chars:  # a shorter later one may still fit
            room = f"the {max_chars - used} left of {max_chars}"
            _note(left_out, item, f"{len(item.content)} characters do not fit in {room}")
            continue
        used += len(item.content)
        chosen.append(entry)
    return chosen


def _note(left_out: list[tuple[Item, str]] | None, item: Item, reason: str) -> None:
    if left_out is not None:
        left_out.append((item, reason))


def why_not(item: Item, *, character_id: str, session_id: str, now: float) -> str:
    """Why ``item`` does not apply here (:func:`applies` is None)."""
    if item.kind not in SELECTABLE_KINDS:
        return f"a {item.kind}: only preferences and agreements are placed"
    if item.status != "active":
        return f"{item.status}, not active"
    if item.expires_at is not None and item.expires_at <= now:
        return "expired"
    if item.scope == "persona":
        if not character_id:
            return "a persona entry: no character chosen"
        return "a persona entry of another character"
    if not session_id:
        return "a session entry: no conversation chosen"
    if item.session_id != session_id:
        return "a session entry of another conversation"
    return "a session entry of another character here (not shared in the conversation)"


def turn_tags(tags: Iterable[str], *, text: str, character_tags: Iterable) -> tuple[str, ...]:
    """Of ``tags`` (the entries'), those relevant to a turn (seed 004's "相关标签"): one the
    character's card tags hold, or one the player's ``text`` names. Both compare without
    case; a tag is named as a whole word, or anywhere in the text when it holds CJK
    characters (which are written without spaces)."""
    card = {tag.casefold() for tag in character_tags if isinstance(tag, str)}
    said = text.casefold()
    found = []
    for tag in dict.fromkeys(tags):
        folded = tag.casefold().strip()
        if not folded:
            continue
        if folded in card or _names(said, folded):
            found.append(tag)
    return tuple(found)


_CJK = re.compile(rf"[{CJK_CLASS}]")


def _names(text: str, tag: str) -> bool:
    if _CJK.search(tag):
        return tag in text
    return re.search(rf"(?<!\w){re.escape(tag)}(?!\w)", text) is not None


def render(chosen: Sequence[Chosen]) -> str:
    """The block the Actor reads: a heading, then one ``- <content>`` line per entry, its
    whitespace collapsed so an entry cannot break out of the list; "" when nothing is chosen."""
    if not chosen:
        return ""
    lines = [HEADING]
    lines.extend("- " + " ".join(entry.item.content.split()) for entry in chosen)
    return "\n".join(lines)


def _reasons(level: str, pinned: bool, matches: int) -> tuple[str, ...]:
    """Why an entry ranked where it did: its level, ``pinned``, ``tags:<n>`` shared tags."""
    reasons = [level]
    if pinned:
        reasons.append("pinned")
    if matches:
        reasons.append(f"tags:{matches}")
    return tuple(reasons)
