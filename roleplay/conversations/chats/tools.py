"""Chats exported by other roleplay tools, as SillyTavern lines (``mes``, ``is_user``,
``name``, ``send_date``) that :mod:`roleplay.conversations.chats.read` then reads. Pure.

As SillyTavern imports them:

- **Agnai**: ``{"messages": [{msg, userId | characterId, createdAt}]}``; a message with
  a ``userId`` is the player's.
- **RisuAI**: ``{"type": "risuChat", "data": {"message": [{role, data, time, name}]}}``;
  ``role`` ``user`` is the player, ``char`` the character.
- **CAI Tools** (character.ai exports): ``{"histories": {"histories": [{"msgs": [{src:
  {is_human, name}, text}]}]}}``, one conversation per history.
"""

from __future__ import annotations

from typing import Any

AGNAI, RISUAI, CAI_TOOLS = "agnai", "risuai", "cai_tools"


def tool_lines(data: dict[str, Any]) -> tuple[str, list[Any], int] | None:
    """``(format, SillyTavern lines, conversations in the file)`` for another tool's chat,
    or None. A message that is not an object is passed on as it is, for the reader to
    refuse at its line."""
    messages = data.get("messages")
    if isinstance(messages, list) and _first(messages).keys() & {"msg"}:
        return AGNAI, [_agnai(item) for item in messages], 1
    inner = data.get("data")
    if data.get("type") == "risuChat" and isinstance(inner, dict):
        found = inner.get("message")
        return RISUAI, [_risu(item) for item in _list(found)], 1
    histories = data.get("histories")
    if isinstance(histories, dict) and isinstance(histories.get("histories"), list):
        every = histories["histories"]
        first = _first(every).get("msgs")
        return CAI_TOOLS, [_cai(item) for item in _list(first)], len(every)
    return None


def _agnai(item: Any) -> Any:
    if not isinstance(item, dict):
        return item
    return _line(item.get("msg"), bool(item.get("userId")), item.get("name"), item.get("createdAt"))


def _risu(item: Any) -> Any:
    if not isinstance(item, dict):
        return item
    return _line(item.get("data"), item.get("role") == "user", item.get("name"), item.get("time"))


def _cai(item: Any) -> Any:
    if not isinstance(item, dict):
        return item
    source = item.get("src")
    source = source if isinstance(source, dict) else {}
    return _line(item.get("text"), source.get("is_human") is True, source.get("name"), None)


def _line(text: Any, is_user: bool, name: Any, sent: Any) -> dict[str, Any]:
    line = {"mes": "" if text is None else text, "is_user": is_user, "name": name}
    if sent is not None:
        line["send_date"] = sent
    return line


def _first(items: list[Any]) -> dict[str, Any]:
    return next((item for item in items if isinstance(item, dict)), {})


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
