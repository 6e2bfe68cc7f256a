"""Who speaks next in a group chat.

Four modes, as SillyTavern's group chats have them:

- ``natural``: the members whose names the last message mentions, in order of mention,
  then every member whose talkativeness ``t`` beats a roll (``random() < t``), in shuffled
  order; when nobody is activated, one random member that is talkative at all (else any).
  The member who spoke last is never chosen again right after itself unless alone or
  the group allows self responses (``natural`` only, as in SillyTavern).
- ``list``: in the members' order, the one after the last speaker.
- ``manual``: nobody automatically; the player picks (force-talk).
- ``pooled``: each member speaks once before anyone speaks twice; among those who have
  not spoken in the current pool, a random one.

Muted members are never chosen automatically; force-talk (``find_member``) may name one.
Randomness comes from the ``random.Random`` the caller passes (seeded in tests).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

MODES = ("natural", "list", "manual", "pooled")
DEFAULT_TALKATIVENESS = 0.5

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Member:
    """One character of the group, as the rules see it."""

    id: str
    name: str
    talkativeness: float = DEFAULT_TALKATIVENESS
    muted: bool = False


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text or "")]


def activate_natural(
    members: Sequence[Member],
    text: str,
    last_speaker: str | None,
    rng: random.Random,
) -> list[str]:
    """The ids activated by ``text`` (the last message), in speaking order: mentioned
    names first in order of mention, then talkativeness rolls over a shuffled copy; none
    of them ``last_speaker`` unless that member is the only one eligible. One random
    talkative member when nobody was activated; empty only when nobody is eligible."""
    eligible = [m for m in members if not m.muted]
    if len(eligible) > 1 and last_speaker is not None:
        eligible = [m for m in eligible if m.id != last_speaker] or eligible
    activated: list[str] = []
    for word in _words(text):
        for member in eligible:
            if word in _words(member.name):
                activated.append(member.id)
                break
    shuffled = list(eligible)
    rng.shuffle(shuffled)
    chatty = []
    for member in shuffled:
        talk = _talkativeness(member)
        if rng.random() < talk:
            activated.append(member.id)
        if talk > 0:
            chatty.append(member)
    if not activated and eligible:
        activated.append(rng.choice(chatty or eligible).id)
    return list(dict.fromkeys(activated))


def _talkativeness(member: Member) -> float:
    value = member.talkativeness
    if value != value:  # NaN: the default, as SillyTavern reads a missing value
        return DEFAULT_TALKATIVENESS
    return min(max(float(value), 0.0), 1.0)


def pooled_remaining(members: Sequence[Member], speakers: Sequence[str | None]) -> list[str]:
    """The unmuted members who have not spoken in the current pool: ``speakers`` (every
    reply's speaker, oldest first) is read in pools that close once every unmuted member
    has spoken; the open pool's silent members remain (all of them when it just closed)."""
    eligible = [m.id for m in members if not m.muted]
    wanted = set(eligible)
    spoken: set[str] = set()
    for speaker in speakers:
        if speaker in wanted:
            spoken.add(speaker)
            if spoken >= wanted:
                spoken = set()
    return [i for i in eligible if i not in spoken]


def next_speaker(
    mode: str,
    members: Sequence[Member],
    *,
    text: str = "",
    speakers: Sequence[str | None] = (),
    after_player: bool = True,
    self_responses: bool = False,
    rng: random.Random,
) -> str | None:
    """The member who answers next, or None (``manual``, or nobody unmuted). ``text`` is
    the last message, ``speakers`` every reply's speaker so far (oldest first) and
    ``after_player`` whether the last message is the player's (then the previous speaker
    may answer again: it is not twice in a row). With ``self_responses`` the previous
    speaker may answer its own reply too in ``natural`` (SillyTavern's
    ``allow_self_responses``, which its pooled order ignores as well)."""
    eligible = [m for m in members if not m.muted]
    if mode == "manual" or not eligible:
        return None
    last = next((s for s in reversed(speakers) if s is not None), None)
    banned = None if after_player else last
    if mode == "list":
        ids = [m.id for m in members]
        start = ids.index(last) + 1 if last in ids else 0
        ordered = [members[(start + k) % len(members)] for k in range(len(members))]
        return next(m.id for m in ordered if not m.muted)
    if mode == "pooled":
        pool = pooled_remaining(members, speakers)
        if len(pool) > 1 and banned in pool:
            pool.remove(banned)
        if len(pool) == len(eligible) and len(pool) > 1 and last in pool:
            pool.remove(last)  # a pool just closed: its last speaker does not open the next
        return rng.choice(pool)
    activated = activate_natural(members, text, None if self_responses else banned, rng)
    return activated[0] if activated else None


def find_member(members: Sequence[Member], name_or_id: str) -> Member | None:
    """The member force-talk names (``/trigger Mira``): by id, else by name ignoring case,
    else the only member whose name starts with it. Muted members may be named."""
    wanted = (name_or_id or "").strip()
    if not wanted:
        return None
    for member in members:
        if member.id == wanted:
            return member
    folded = wanted.casefold()
    exact = [m for m in members if m.name.casefold() == folded]
    if exact:
        return exact[0]
    prefixed = [m for m in members if m.name.casefold().startswith(folded)]
    return prefixed[0] if len(prefixed) == 1 else None
