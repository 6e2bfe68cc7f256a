"""A conversation written as a chat file other tools read. Pure.

- ``sillytavern``: SillyTavern's ``.jsonl``: a header line (``user_name``,
  ``character_name``, ``create_date``, ``chat_metadata``), the opening as the first reply
  (the character's openings as its swipes, the conversation's one selected, as SillyTavern
  shows a new chat), then every message with its send time; a reply with alternatives
  carries them as ``swipes`` with ``swipe_id``, its reasoning as ``extra.reasoning`` (and
  each alternative's, when they have their own, in ``swipe_info``).
- ``openai``: a JSON array of ``{role, content}``, the opening first.

What :mod:`roleplay.conversations.chats.read` reads back is what was written: the same messages,
texts,
alternatives and times.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

SILLYTAVERN, OPENAI = "sillytavern", "openai"
FORMATS = (SILLYTAVERN, OPENAI)
CONTENT_TYPES = {SILLYTAVERN: "application/jsonl", OPENAI: "application/json"}
EXTENSIONS = {SILLYTAVERN: "jsonl", OPENAI: "json"}


@dataclass(frozen=True)
class Line:
    """One message: ``alternatives`` in order (empty when one text), ``selected`` the one
    ``content`` is."""

    role: str
    content: str
    sent_ms: int
    alternatives: tuple[str, ...] = ()
    selected: int = 0
    # The message's drawn pictures, as links (SillyTavern's ``extra.image`` is the first).
    images: tuple[str, ...] = ()
    # Who spoke a reply when not the chat's character (a group chat's member).
    name: str | None = None
    # That member's avatar file (``original_avatar``), by which a group chat names it.
    avatar: str | None = None
    # The reply's scratchpad (``extra.reasoning``).
    reasoning: str = ""
    # Each alternative's scratchpad (``swipe_info[i].extra.reasoning``); empty when none.
    alternative_reasoning: tuple[str, ...] = ()


@dataclass(frozen=True)
class Chat:
    user_name: str
    character_name: str
    created_ms: int
    openings: tuple[str, ...]  # the character's openings, names filled
    opening: int  # which one the conversation shows (ignored when there are none)
    lines: Sequence[Line]
    metadata: dict = field(default_factory=dict)  # SillyTavern's chat_metadata


def write_chat(chat: Chat, fmt: str) -> bytes:
    if fmt == OPENAI:
        return json.dumps(_openai(chat), ensure_ascii=False, indent=1).encode()
    return "\n".join(json.dumps(item, ensure_ascii=False) for item in _sillytavern(chat)).encode()


def _openai(chat: Chat) -> list[dict]:
    out = []
    if chat.openings:
        out.append({"role": "assistant", "content": _chosen(chat)})
    return out + [{"role": line.role, "content": line.content} for line in chat.lines]


def _chosen(chat: Chat) -> str:
    index = chat.opening if 0 <= chat.opening < len(chat.openings) else 0
    return chat.openings[index]


def _sillytavern(chat: Chat) -> list[dict]:
    items: list[dict] = [
        {
            "user_name": chat.user_name,
            "character_name": chat.character_name,
            "create_date": _st_date(chat.created_ms),
            "chat_metadata": chat.metadata,
        }
    ]
    if chat.openings:
        opening = _message(chat, "assistant", _chosen(chat), chat.created_ms)
        if len(chat.openings) > 1:
            opening["swipes"] = list(chat.openings)
            opening["swipe_id"] = chat.openings.index(opening["mes"])
        items.append(opening)
    for line in chat.lines:
        item = _message(chat, line.role, line.content, line.sent_ms)
        if line.name and line.role != "user":
            item["name"] = line.name
        if line.avatar and line.role != "user":
            item["original_avatar"] = line.avatar
        if line.images:
            item["extra"] = {"image": line.images[0], "images": list(line.images)}
        if line.reasoning:
            item["extra"]["reasoning"] = line.reasoning
        if line.alternatives:
            item["swipes"] = list(line.alternatives)
            item["swipe_id"] = line.selected
        if line.alternatives and line.alternative_reasoning:
            item["swipe_info"] = [
                {"send_date": item["send_date"], "extra": {"reasoning": r} if r else {}}
                for r in line.alternative_reasoning
            ]
        items.append(item)
    return items


def _message(chat: Chat, role: str, content: str, sent_ms: int) -> dict:
    user = role == "user"
    return {
        "name": chat.user_name if user else chat.character_name,
        "is_user": user,
        "is_system": False,
        "send_date": _iso(sent_ms),
        "mes": content,
        "extra": {},
    }


def _iso(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _st_date(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%d@%Hh%Mm%Ss")
