"""Who speaks a turn of a group, and what that speaker's prompt takes from the group.

``choose`` runs before a turn is stored (a ``manual`` group refuses a message that names
nobody, before anything is written); the speaker is kept on the turn (``Turn.speaker``), so
every later read of the turn (``for_turn``) finds the same one. A one-character conversation
gets None from both, and its prompt is what it was before groups existed."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from memory import selectors as message_reads
from roleplay.models import Character, Conversation, GroupMode, Turn, TurnKind

from .engine import Sheet, find_member, joined, members_block, named, next_speaker, nudge
from .errors import GroupRefused, MemberNotFound
from .selectors import GroupMember, members_of

# The newest replies read for the speaker rules and the history's names (a turn's history).
RECENT = 200
REWRITES = (TurnKind.REGENERATE, TurnKind.CONTINUE)


@dataclass(frozen=True)
class Line:
    """A stored message as the speaker rules read it."""

    id: str
    role: str
    content: str
    speaker: str | None = None
    speaker_name: str | None = None


@dataclass
class GroupTurn:
    """A turn's speaker and the group around it."""

    members: list[GroupMember]
    speaker: Character
    join_cards: bool = False
    # message id -> (speaker id, speaker name) of the recent replies that recorded one
    spoken: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def names(self) -> dict[str, str]:
        found = {sid: name for sid, name in self.spoken.values()}
        found.update({str(m.character.pk): m.character.name for m in self.members})
        return found

    def sheets(self) -> list[Sheet]:
        return [
            Sheet(str(c.pk), c.name, c.description, c.personality, c.scenario)
            for c in (m.character for m in self.members)
        ]

    def card_fields(self, first: Character) -> dict[str, str]:
        """The speaker's card (``swap``), or every member's joined (``join``); the
        scenario is the group's, the conversation's character's, in ``swap``."""
        speaker = self.speaker
        fields = {
            "name": speaker.name,
            "description": speaker.description,
            "personality": speaker.personality,
            "scenario": first.scenario,
            "mes_examples": speaker.example_dialogues,
            "system_prompt": speaker.system_prompt,
            "post_history_instructions": speaker.post_history_instructions,
        }
        if self.join_cards and len(self.members) > 1:
            sheets = self.sheets()
            for name in ("description", "personality", "scenario"):
                fields[name] = joined(sheets, name)
        return fields

    def members_block(self) -> str:
        """The other members' names and short descriptions (none when cards are joined),
        then the nudge that the reply is the speaker's alone (none for a group of one)."""
        if len(self.members) < 2:
            return ""
        others = "" if self.join_cards else members_block(str(self.speaker.pk), self.sheets())
        return "\n".join(part for part in (others, nudge(self.speaker.name)) if part)

    def history(self, messages) -> list[dict[str, str]]:
        """``messages`` (with ``id``, ``role``, ``content``) as the speaker reads them:
        the other members' replies under their names."""
        current, names = str(self.speaker.pk), self.names
        return [
            {
                "role": m.role,
                "content": named(
                    m.role, m.content, self.spoken.get(str(m.id), (None,))[0], current, names
                ),
            }
            for m in messages
        ]

    def metadata(self) -> dict[str, Any]:
        """What the reply keeps of its speaker (``Message.metadata["speaker"]``)."""
        return {"speaker": {"id": str(self.speaker.pk), "name": self.speaker.name}}


def recent_lines(conversation: Conversation) -> list[Line]:
    """The newest :data:`RECENT` unarchived messages, oldest first, with their speakers."""
    rows = message_reads.get_history_speakers(
        conversation.tenant_id, conversation.session_id, RECENT
    )
    return [
        Line(str(pk), role, content or "", sid or None, name)
        for pk, role, content, sid, name in rows
    ]


def choose(
    conversation: Conversation, kind: str, content: str = "", forced: str | None = None, *,
    seed: str = "", grouped: bool = True,
) -> GroupTurn | None:  # fmt: skip
    """The speaker of a new turn of ``kind``: a rewritten reply's own speaker; else the
    member ``forced`` names (force-talk: id or name, muted or not); else the group's rule
    (``group_mode``) over ``content`` (the player's message) or the last message. None for
    a one-character conversation nobody forced. ``seed`` makes the rule's dice repeatable
    (a repeated client message id gets the same speaker). ``grouped=False``: the caller
    read that the conversation has no other member (``selectors.has_members_sql``), so
    the members are not read."""
    if not grouped and forced is None:
        return None
    members = members_of(conversation)
    if len(members) == 1 and forced is None:
        return None
    lines = recent_lines(conversation)
    group = GroupTurn(members, conversation.character, conversation.join_cards, _spoken(lines))
    rules = [m.rule for m in members]
    last = lines[-1] if lines else None
    if kind in REWRITES or (kind == TurnKind.EDIT_REGENERATE and last and last.role != "user"):
        group.speaker = _character(conversation, members, last.speaker if last else None)
        return group
    if forced is not None:
        found = find_member(rules, forced)
        if found is None:
            raise MemberNotFound(message=f"no member of this conversation is called {forced!r}")
        group.speaker = _character(conversation, members, found.id)
        return group
    if conversation.group_mode == GroupMode.MANUAL:
        raise GroupRefused("speaker_required", "in a manual group, the player picks who answers")
    after_player = kind != TurnKind.GROUP or (last is not None and last.role == "user")
    text = content if kind == TurnKind.CHAT else (last.content if last else "")
    chosen = next_speaker(
        conversation.group_mode,
        rules,
        text=text,
        speakers=[line.speaker for line in lines if line.role == "assistant"],
        after_player=after_player,
        self_responses=conversation.allow_self_responses,
        rng=random.Random(f"{conversation.pk}:{seed}"),
    )
    if chosen is None:
        raise GroupRefused("no_speaker", "every member of this group is muted")
    group.speaker = _character(conversation, members, chosen)
    return group


def for_turn(conversation: Conversation, turn: Turn) -> GroupTurn | None:
    """The group of a stored turn, with the speaker it was given; None for a turn of a
    one-character conversation (no speaker kept)."""
    if turn.speaker_id is None:
        return None
    members = members_of(conversation)
    group = GroupTurn(
        members,
        conversation.character,
        conversation.join_cards,
        _spoken(recent_lines(conversation)),
    )
    group.speaker = _character(conversation, members, str(turn.speaker_id))
    return group


def _spoken(lines: list[Line]) -> dict[str, tuple[str, str]]:
    return {
        line.id: (line.speaker, line.speaker_name or "")
        for line in lines
        if line.role == "assistant" and line.speaker
    }


def _character(conversation: Conversation, members: list[GroupMember], wanted) -> Character:
    """The member's character; a speaker who left the group is read alone (a regenerate
    of an old reply), and an unknown one is the conversation's character."""
    for member in members:
        if str(member.character.pk) == str(wanted):
            return member.character
    if wanted:
        found = Character.objects.filter(tenant_id=conversation.tenant_id, pk=wanted).first()
        if found is not None:
            return found
    return conversation.character
