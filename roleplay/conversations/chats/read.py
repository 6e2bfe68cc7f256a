"""A chat file read into the messages of a conversation. Pure.

The shapes read are told apart by their content (not the file name):

- **SillyTavern** (``.jsonl``): an optional header line (``user_name``, ``character_name``,
  ``create_date``, ``chat_metadata``), then one message per line: ``mes``, ``is_user``,
  ``name``, ``send_date``, ``swipes`` with ``swipe_id`` (the alternatives of a reply, the
  selected one being the text; ``swipe_info`` their reasoning), ``is_system`` (a message
  hidden from the prompt) and ``extra.type`` ``narrator`` (a narrator's line). Hidden and
  narrator lines are not conversation turns here: they are counted in the report and left
  out.
- **OpenAI messages**: a JSON array of ``{role, content}`` (or ``{"messages": [...]}``);
  ``system`` messages are counted and left out.
- **ShareGPT**: ``{"conversations": [{from, value}]}`` (or ``items``, or the array itself),
  ``human`` or ``user`` the player, ``gpt``, ``chatgpt``, ``assistant``, ``bot`` or
  ``model`` the character.
- **Conversation datasets**: ``{"conversation": [...]}`` holding OpenAI-style messages
  (LMSYS-Chat), PIPPA's ``{message, is_human}`` lines (the character is ``bot_name``) or
  Capybara's ``{input, output}`` exchanges. A dataset's JSONL line holding one
  conversation is read; a file of several is refused.
- **Other roleplay tools**: Agnai, RisuAI, CAI Tools and text-generation-webui exports
(:mod:`roleplay.conversations.chats.tools`).

A message keeps its send time when the file gives one (epoch seconds or milliseconds, ISO
8601, or SillyTavern's ``January 1, 2024 12:00pm`` and ``2024-01-01@12h00m00s``). Content is
kept as written; empty messages are counted and left out. Limits: :data:`MAX_FILE_BYTES`,
:data:`MAX_MESSAGES`, :data:`MAX_MESSAGE_CHARS` per message (longer ones are refused, not
cut) and :data:`MAX_ALTERNATIVES` alternatives per message (the selected one always kept).
A NUL or a lone surrogate anywhere is refused (``invalid_text``): the database stores
neither. A group chat's reply keeps its speaker's avatar file (``original_avatar``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from console.storable import unstorable_at
from roleplay.conversations.chats.errors import (
    EMPTY_CHAT,
    INVALID_TEXT,
    MESSAGE_TOO_LONG,
    SEVERAL_CONVERSATIONS,
    TOO_MANY_MESSAGES,
    ChatFileError,
    ChatFileInvalid,
    ChatFileTooLarge,
)
from roleplay.conversations.chats.tools import tool_lines

MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_MESSAGES = 50_000
MAX_MESSAGE_CHARS = 200_000
MAX_ALTERNATIVES = 100  # as many as a stored message keeps (memory.alternatives)

SILLYTAVERN, OPENAI, SHAREGPT = "sillytavern", "openai", "sharegpt"
PIPPA, PAIRS = "pippa", "pairs"
# Keys that hold a conversation's messages, and the shape they take when the first message
# does not show one: ShareGPT's (``items`` in its raw dump), the OpenAI-style ``messages``,
# and ``conversation`` (LMSYS's messages, PIPPA's lines, Capybara's exchanges).
_CONTAINERS = (
    ("conversations", SHAREGPT),
    ("items", SHAREGPT),
    ("messages", OPENAI),
    ("conversation", OPENAI),
)
_USER_ROLES = {"user", "human"}
_CHARACTER_ROLES = {"assistant", "gpt", "chatgpt", "bot", "model", "char", "character"}
_SYSTEM_ROLES = {"system", "developer", "tool", "function"}
_HEADER_KEYS = {"user_name", "character_name", "create_date", "chat_metadata"}
_ST_DATE = re.compile(
    r"^(\d{4})-(\d{1,2})-(\d{1,2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s(?:\s*(\d{1,3})ms)?$"
)
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_HUMAN_DATES = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p", "%b %d, %Y %I:%M%p")


@dataclass(frozen=True)
class ChatMessage:
    """One message: ``role`` ``user`` or ``assistant``; ``alternatives`` the reply's
    alternatives in order (empty when it has one text), ``selected`` the one ``content``
    is; ``sent_ms`` its time when the file gives one."""

    role: str
    content: str
    name: str = ""
    alternatives: tuple[str, ...] = ()
    selected: int = 0
    sent_ms: int | None = None
    avatar: str = ""  # a group chat's reply: its speaker's avatar file (``original_avatar``)
    reasoning: str = ""  # the reply's scratchpad (SillyTavern's ``extra.reasoning``)
    # each alternative's own scratchpad (``swipe_info[i].extra.reasoning``), when given
    alternative_reasoning: tuple[str, ...] = ()


@dataclass
class ChatFile:
    format: str
    messages: list[ChatMessage]
    user_name: str = ""
    character_name: str = ""
    skipped: Counter[str] = field(default_factory=Counter)
    alternatives_dropped: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)  # SillyTavern's chat_metadata

    def report(self) -> dict[str, Any]:
        speakers = sorted({m.name for m in self.messages if m.role == "assistant" and m.name})
        return {
            "format": self.format,
            "messages": len(self.messages),
            "user_messages": sum(1 for m in self.messages if m.role == "user"),
            "assistant_messages": sum(1 for m in self.messages if m.role == "assistant"),
            "alternatives": sum(len(m.alternatives) for m in self.messages),
            "alternatives_dropped": self.alternatives_dropped,
            "skipped": dict(sorted(self.skipped.items())),
            "user_name": self.user_name,
            "character_name": self.character_name,
            "speakers": speakers,
        }


def read_chat(data: bytes) -> ChatFile:
    """The chat in ``data``; :class:`ChatFileError` when it is not one we read."""
    if len(data) > MAX_FILE_BYTES:
        raise ChatFileTooLarge(message=f"a chat file may have at most {MAX_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ChatFileError(message="the file is not UTF-8 text") from exc
    items = _json_items(text)
    _check_storable(text, items)
    chat = _read_items(items)
    if not chat.messages:
        raise ChatFileInvalid(EMPTY_CHAT, "the file holds no user or character message")
    if len(chat.messages) > MAX_MESSAGES:
        raise ChatFileInvalid(
            TOO_MANY_MESSAGES, f"a conversation takes at most {MAX_MESSAGES} imported messages"
        )
    return chat


def _json_items(text: str) -> list[Any] | dict[str, Any]:
    """The whole text as one JSON value, else one JSON value per non-blank line."""
    stripped = text.strip()
    if not stripped:
        raise ChatFileError(message="the file is empty")
    try:
        return json.loads(stripped)
    except RecursionError as exc:
        raise ChatFileError(message="the file nests JSON too deeply") from exc
    except ValueError:
        pass
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except RecursionError as exc:
            raise ChatFileError(
                message=f"line {number} nests JSON too deeply", details={"line": number}
            ) from exc
        except ValueError as exc:  # JSONDecodeError, or a number too long to read
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise ChatFileError(
                message=f"line {number} is not JSON: {reason}", details={"line": number}
            ) from exc
    return items


def _check_storable(text: str, items: Any) -> None:
    """A NUL or a lone surrogate (JSON escapes; the UTF-8 text cannot hold either) is
    refused (422 ``invalid_text``): the database stores neither. Only a text that spells
    such an escape is walked."""
    if "\\u0000" not in text and not _SURROGATE.search(text):
        return
    found = unstorable_at(items, "file")
    if found is not None:
        raise ChatFileInvalid(INVALID_TEXT, found[1], {"at": found[0]})


def _read_items(data: list[Any] | dict[str, Any]) -> ChatFile:
    if isinstance(data, dict):
        found = tool_lines(data)
        if found is not None:
            return _read_tool(*found)
        for key, shape in _CONTAINERS:
            if isinstance(data.get(key), list):
                return _read_list(data[key], shape, data)
        if "mes" in data or _HEADER_KEYS & set(data):  # a one-line SillyTavern chat
            return _read_sillytavern([data])
        raise ChatFileError(message="no messages found: not a chat file this reads")
    if not isinstance(data, list):
        raise ChatFileError(message="no messages found: not a chat file this reads")
    first = _first_object(data)
    if any(isinstance(first.get(key), list) for key, _ in _CONTAINERS):
        if len(data) == 1:  # a dataset's one line: one conversation
            return _read_items(first)
        raise _several(len(data))
    return _read_list(data, None, {})


def _read_tool(fmt: str, lines: list[Any], conversations: int) -> ChatFile:
    if conversations > 1:
        raise _several(conversations)
    chat = _read_sillytavern(lines)
    chat.format = fmt
    return chat


def _several(count: int) -> ChatFileInvalid:
    return ChatFileInvalid(
        SEVERAL_CONVERSATIONS,
        f"the file holds {count} conversations: import them one at a time",
        {"conversations": count},
    )


def _first_object(items: list[Any]) -> dict[str, Any]:
    return next((item for item in items if isinstance(item, dict)), {})


def _read_list(items: list[Any], shape: str | None, container: dict[str, Any]) -> ChatFile:
    """A list of messages, in the shape its first message shows (else the container's)."""
    first = _first_object(items)
    if "mes" in first or _HEADER_KEYS & set(first):
        return _read_sillytavern(items)
    if "from" in first and "value" in first:
        shape = SHAREGPT
    elif "role" in first:
        shape = OPENAI
    elif "is_human" in first and "message" in first:
        return _read_pippa(items, container)
    elif "input" in first and "output" in first:
        return _read_pairs(items)
    if shape is None:
        raise ChatFileError(message="no messages found: not a chat file this reads")
    return _read_messages(items, shape)


def _read_sillytavern(items: list[Any]) -> ChatFile:
    chat = ChatFile(SILLYTAVERN, [])
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise _bad_line(number, "is not a JSON object")
        if "mes" not in item and number == 1 and _HEADER_KEYS & set(item):
            chat.user_name = _name(item.get("user_name"))
            chat.character_name = _name(item.get("character_name"))
            metadata = item.get("chat_metadata")
            chat.metadata = metadata if isinstance(metadata, dict) else {}
            continue
        if "mes" not in item:
            raise _bad_line(number, "has no 'mes'")
        extra = item.get("extra")
        if not isinstance(extra, dict):
            extra = {}
        if item.get("is_system") is True:
            chat.skipped["hidden"] += 1
            continue
        if extra.get("type") == "narrator":
            chat.skipped["narrator"] += 1
            continue
        role = "user" if item.get("is_user") is True else "assistant"
        mes = item["mes"]  # null: an empty message (a picture alone), counted and left out
        _add(chat, number, role, "" if mes is None else mes, item, extra)
    return chat


def _add(chat: ChatFile, number: int, role: str, content: Any, item: dict, extra: dict) -> None:
    if not isinstance(content, str):
        raise _bad_line(number, "has a message that is not text")
    alternatives, selected, first = (
        _swipes(chat, number, item, content) if role == "assistant" else ((), 0, 0)
    )
    if alternatives:
        content = alternatives[selected]
    if not content.strip():
        chat.skipped["empty"] += 1
        return
    for text in (content, *alternatives):
        if len(text) > MAX_MESSAGE_CHARS:
            raise ChatFileInvalid(
                MESSAGE_TOO_LONG,
                f"message {number} is longer than {MAX_MESSAGE_CHARS} characters",
                details={"line": number},
            )
    chat.messages.append(
        ChatMessage(
            role=role,
            content=content,
            name=_name(item.get("name")),
            alternatives=alternatives,
            selected=selected,
            sent_ms=sent_ms(item.get("send_date", item.get("timestamp"))),
            avatar=_name(item.get("original_avatar")) if role == "assistant" else "",
            reasoning=_text(extra.get("reasoning")) if role == "assistant" else "",
            alternative_reasoning=_swipe_reasoning(item, first, len(alternatives)),
        )
    )


def _swipe_reasoning(item: dict, first: int, count: int) -> tuple[str, ...]:
    """The alternatives' scratchpads from ``swipe_info`` (from swipe ``first`` on), or none
    when no alternative has one."""
    info = item.get("swipe_info")
    if not count or not isinstance(info, list):
        return ()
    found = []
    for entry in info[first : first + count]:
        extra = entry.get("extra") if isinstance(entry, dict) else None
        found.append(_text(extra.get("reasoning")) if isinstance(extra, dict) else "")
    found += [""] * (count - len(found))
    return tuple(found) if any(found) else ()


def _swipes(
    chat: ChatFile, number: int, item: dict, content: str
) -> tuple[tuple[str, ...], int, int]:
    """A reply's alternatives, the selected one's index and the first swipe kept (a file
    with too many keeps those around the selected one); none when it has one text."""
    swipes = item.get("swipes")
    if not isinstance(swipes, list) or len(swipes) < 2:
        return (), 0, 0
    if not all(isinstance(s, str) for s in swipes):
        raise _bad_line(number, "has swipes that are not text")
    selected = item.get("swipe_id")
    if not isinstance(selected, int) or isinstance(selected, bool):
        selected = swipes.index(content) if content in swipes else 0
    selected = min(max(selected, 0), len(swipes) - 1)
    start = 0
    if len(swipes) > MAX_ALTERNATIVES:
        start = min(selected, len(swipes) - MAX_ALTERNATIVES)
        chat.alternatives_dropped += len(swipes) - MAX_ALTERNATIVES
        swipes, selected = swipes[start : start + MAX_ALTERNATIVES], selected - start
    return tuple(swipes), selected, start


def _read_messages(items: list[Any], shape: str) -> ChatFile:
    chat = ChatFile(shape, [])
    role_key, text_key = ("from", "value") if shape == SHAREGPT else ("role", "content")
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise _bad_line(number, "is not a JSON object")
        role = str(item.get(role_key, "")).strip().lower()
        if role in _SYSTEM_ROLES:
            chat.skipped["system"] += 1
            continue
        if role not in _USER_ROLES | _CHARACTER_ROLES:
            raise _bad_line(number, f"has an unknown {role_key} {role!r}")
        content = item.get(text_key)
        if isinstance(content, list):  # OpenAI content parts: the text ones
            content = "".join(_part_text(part) for part in content)
        if content is None:
            content = ""
        _add(chat, number, "user" if role in _USER_ROLES else "assistant", content, item, {})
    return chat


def _part_text(part: Any) -> str:
    text = part.get("text") if isinstance(part, dict) else None
    return text if isinstance(text, str) else ""


def _read_pippa(items: list[Any], container: dict[str, Any]) -> ChatFile:
    """PIPPA's ``conversation``: ``{message, is_human}``, the bot named ``bot_name``."""
    chat = ChatFile(PIPPA, [], character_name=_name(container.get("bot_name")))
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise _bad_line(number, "is not a JSON object")
        role = "user" if item.get("is_human") is True else "assistant"
        _add(chat, number, role, item.get("message"), item, {})
    return chat


def _read_pairs(items: list[Any]) -> ChatFile:
    """Exchanges ``{input, output}`` (a user message and the reply), as Capybara writes."""
    chat = ChatFile(PAIRS, [])
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise _bad_line(number, "is not a JSON object")
        for role, key in (("user", "input"), ("assistant", "output")):
            if item.get(key) is not None:
                _add(chat, number, role, item[key], {}, {})
    return chat


def _bad_line(number: int, what: str) -> ChatFileError:
    return ChatFileError(message=f"item {number} {what}", details={"line": number})


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _name(value: Any) -> str:
    return value.strip()[:200] if isinstance(value, str) else ""


def sent_ms(value: Any) -> int | None:
    """Milliseconds since the epoch of a chat file's time, or None when it gives none we
    read (times without a zone are UTC)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
        moment = number if number > 1e11 else number * 1000
        return int(moment) if 0 < moment < 1e14 else None
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    parsed = _st_date(value) or _iso_date(value) or _human_date(value)
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)


def _st_date(value: str) -> datetime | None:
    found = _ST_DATE.match(value)
    if not found:
        return None
    year, month, day, hour, minute, second, ms = found.groups()
    try:
        return datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second),
            int(ms or 0) * 1000,
        )  # fmt: skip
    except ValueError:
        return None


def _iso_date(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _human_date(value: str) -> datetime | None:
    for pattern in _HUMAN_DATES:
        try:
            return datetime.strptime(value, pattern)
        except ValueError:
            continue
    return None
