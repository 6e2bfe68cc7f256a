"""Where a turn's texts pass through the regex scripts (SillyTavern's points):

* the player's message (placement 1) before it is stored;
* the reply (placement 2) before it is stored: the stored text and ``turn.completed``'s
  ``content`` carry the result, the streamed deltas do not (they were sent already);
* ``promptOnly`` scripts on the turn's copy of the history and input, by depth (0 = the
  newest message: the player's input when the turn has one), never on what is stored;
* ``markdownOnly`` scripts on what a page or the message API shows (``display``), by depth;
* world info (placement 5) on the selected lore entries' text before it is placed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from .engine import AI_OUTPUT, USER_INPUT, WORLD_INFO
from .selectors import NONE, ActiveScripts

M = TypeVar("M")
_PLACEMENT = {"user": USER_INPUT, "assistant": AI_OUTPUT}


@dataclass
class TurnScripts:
    """A turn's scripts, read once with its context (``TurnContext.slot``)."""

    active: ActiveScripts = NONE
    notes: list[dict[str, Any]] | None = None


def turn_scripts(ctx: Any) -> ActiveScripts:
    """The scripts read with the turn's context; none for a context without plug-in slots
    (a hook exercised on its own)."""
    slot = getattr(ctx, "slot", None)
    return slot(TurnScripts).active if slot is not None else NONE


def stored_text(scripts: ActiveScripts, text: str, role: str, *, edit: bool = False) -> str:
    """``text`` of ``role`` as it is to be stored (scripts with neither only-flag)."""
    placement = _PLACEMENT.get(role)
    if not scripts or placement is None or not text:
        return text
    return scripts.apply(text, placement, mode="stored", edit=edit).text


def prompt_history(
    scripts: ActiveScripts, history: Sequence[M], user_input: str | None
) -> tuple[list[M], str | None]:
    """The turn's history (items with ``role`` and ``content``) and input after the
    ``promptOnly`` scripts; the stored messages are untouched (new items are made)."""
    if not scripts:
        return list(history), user_input
    offset = 1 if user_input is not None else 0
    out: list[M] = []
    for index, message in enumerate(history):
        depth = len(history) - 1 - index + offset
        out.append(_prompted(scripts, message, depth))
    if user_input:
        user_input = scripts.apply(user_input, USER_INPUT, mode="prompt", depth=0).text
    return out, user_input


def display_texts(scripts: ActiveScripts, messages: Sequence[Any]) -> dict[str, str]:
    """What ``markdownOnly`` scripts make of each message, by message id (only those they
    change): the page and the message API show it, the stored text stays."""
    if not scripts:
        return {}
    shown: dict[str, str] = {}
    for index, message in enumerate(messages):
        placement = _PLACEMENT.get(message.role)
        if placement is None or not message.content:
            continue
        depth = len(messages) - 1 - index
        text = scripts.apply(message.content, placement, mode="display", depth=depth).text
        if text != message.content:
            shown[str(message.id)] = text
    return shown


def reply_display(scripts: ActiveScripts, reply: str) -> str | None:
    """What the display-only scripts make of a reply just committed (the newest message:
    depth 0), or None when they leave it as it is: ``turn.completed`` carries it, so the page
    shows it without reading the transcript again."""
    if not scripts or not reply:
        return None
    shown = scripts.apply(reply, AI_OUTPUT, mode="display", depth=0).text
    return shown if shown != reply else None


def attach_display(scripts: ActiveScripts, messages: Sequence[Any]) -> None:
    """Set ``display`` (and ``has_display``) on each message the display-only scripts
    change, for the chat page (``templates/roleplay/play/_message.html``)."""
    shown = display_texts(scripts, messages)
    for message in messages:
        text = shown.get(str(message.id))
        if text is not None:
            message.display, message.has_display = text, True


def lore_text(scripts: ActiveScripts, content: str, depth: int | None = None) -> str:
    """A selected lore entry's text after the world-info scripts."""
    if not scripts or not content:
        return content
    return scripts.apply(content, WORLD_INFO, mode="world_info", depth=depth).text


def lore_block(scripts: ActiveScripts, block: dict[str, Any]) -> dict[str, Any]:
    """A selected lore entry's placement block with its text after the world-info scripts
    (an entry placed at a depth is at that depth, SillyTavern's rule; others have none)."""
    content = block.get("content")
    if not scripts or not isinstance(content, str):
        return block
    depth = block.get("depth") if block.get("position") == "at_depth" else None
    return {**block, "content": lore_text(scripts, content, depth)}


def _prompted(scripts: ActiveScripts, message: M, depth: int) -> M:
    placement = _PLACEMENT.get(message.role)  # type: ignore[attr-defined]
    if placement is None:
        return message
    content = message.content  # type: ignore[attr-defined]
    text = scripts.apply(content, placement, mode="prompt", depth=depth).text
    return message if text == content else replace(message, content=text)  # type: ignore[type-var]
