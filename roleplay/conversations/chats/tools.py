"""Chats exported by other roleplay tools, as SillyTavern lines (``mes``, ``is_user``,
``name``, ``send_date``) that :mod:`roleplay.conversations.chats.read` then reads. Pure.

As SillyTavern imports them:

- **Agnai**: ``{"messages": [{msg, userId | characterId, createdAt}]}``; a message with
  a ``userId`` is the player's.
- **RisuAI**: ``{"type": "risuChat", "data": {"message": [{role, data, time, name}]}}``;
  ``role`` ``user`` is the player, ``char`` the character.
- **CAI Tools** (character.ai exports): ``{"histories": {"histories": [{"msgs": [{src:
  {is_human, name}, text}]}]}}``, one conversation per history.
- **text-generation-webui** (``logs/chat/<character>/<id>.json``): ``{"internal": [[user,
  reply], ...], "visible": [...]}`` (older versions: ``data`` and ``data_visible``); the
  visible pairs are read, as SillyTavern does, with the HTML escapes the web UI writes
  there undone; an empty side (the greeting's user half) is no message.
"""

from __future__ import annotations

import html
from typing import Any

AGNAI, RISUAI, CAI_TOOLS, WEBUI = "agnai", "risuai", "cai_tools", "text_generation_webui"


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
    for pairs, raw in (("visible", "internal"), ("data_visible", "data")):
        if isinstance(data.get(pairs), list) and raw in data:
            return WEBUI, [line for pair in data[pairs] for line in _webui(pair)], 1
    return None


def _webui(pair: Any) -> list[Any]:
    if not isinstance(pair, list) or len(pair) != 2:
        return [pair]  # refused by the reader at its line
    lines = []
    for text, is_user in ((pair[0], True), (pair[1], False)):
        if isinstance(text, str):
            text = html.unescape(text)
        if text:
            lines.append(_line(text, is_user, None, None))
    return lines


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
