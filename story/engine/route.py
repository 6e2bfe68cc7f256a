"""What a request does with the story (seed 002, Story, failure table), decided from the
saved state and the request alone, before any model is called.

- ``regenerate`` / ``edit_regenerate``: ``inherit`` (the reply is redone; no story work, no
  write; the pending prepared turn's stage is given again when it belongs to that reply);
- no state yet, or a story emptied because its first message was edited: ``initialise``;
- a state recorded for another character: refused (:class:`StoryRefused`);
- the request sits before the stored source watermark (a rollback): ``rollback`` (the
  service restores the revision saved at that position, or goes read-only);
- the reply accepted before (``acceptedMessage``, the seed's anchor of the earlier accepted
  prose) gone from the history or edited since, or a pending reply that is no longer the
  history's last reply, or whose user message changed: ``reinitialise`` (the history no
  longer matches);
- otherwise ``accept_then_prepare`` when a reply waits for acceptance, else ``prepare``.
A ``continue`` prepares with a synthetic action (evidence kind ``synthetic_continue``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .evidence import digest

KINDS = ("chat", "continue", "regenerate", "edit_regenerate", "auto_reply")
CONTINUE_TEXT = "(The user asks the story to continue.)"


class StoryRefused(ValueError):
    code = "story_state_other_character"


@dataclass(frozen=True)
class HistoryMessage:
    id: str
    role: str
    text: str


@dataclass(frozen=True)
class Route:
    route: str
    reason: str = ""
    action: dict | None = None
    evidence_kind: str = "user_action"


def decide(
    envelope: dict | None,
    *,
    kind: str,
    character_id: str,
    history: list[HistoryMessage],
    user_text: str | None,
    source_position: int,
) -> Route:
    """``history``: the conversation's visible messages before this request, oldest first;
    ``source_position`` this request's message position."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    if kind in ("regenerate", "edit_regenerate"):
        return Route("inherit", "a regenerated reply inherits its turn's stage")
    if envelope is None:
        return Route("initialise", "no story yet", *_action(kind, user_text))
    if envelope.get("character") != character_id:
        raise StoryRefused("the story state belongs to another character")
    if "world" in envelope and envelope["world"] is None:  # emptied after an edit (``edits``)
        return Route(
            "initialise", "the story is rebuilt from the history", *_action(kind, user_text)
        )
    if source_position < int(envelope.get("sourceWatermark", 0)):
        return Route("rollback", "the history was rolled back before the stored watermark")
    anchor = _anchor_mismatch(envelope.get("acceptedMessage"), history)
    if anchor:
        return Route("reinitialise", anchor, *_action(kind, user_text))
    pending = envelope.get("pendingActor")
    if pending:
        reason = _mismatch(pending, history)
        if reason:
            return Route("reinitialise", reason, *_action(kind, user_text))
        return Route("accept_then_prepare", "", *_action(kind, user_text))
    return Route("prepare", "", *_action(kind, user_text))


def _action(kind: str, user_text: str | None) -> tuple[dict, str]:
    if kind == "continue":
        return {"type": "free", "text": CONTINUE_TEXT}, "synthetic_continue"
    return {"type": "free", "text": user_text or ""}, "user_action"


def _anchor_mismatch(accepted: object, history: list[HistoryMessage]) -> str:
    """Why the accepted reply no longer anchors the story ("" when it does)."""
    if not isinstance(accepted, dict) or not accepted.get("messageId"):
        return ""
    found = next((m for m in history if m.id == accepted["messageId"]), None)
    if found is None:
        return "the accepted reply is not in the history"
    if digest(found.text) != accepted.get("sha256"):
        return "the accepted reply was edited"
    return ""


def _mismatch(pending: dict, history: list[HistoryMessage]) -> str:
    replies = [m for m in history if m.role == "assistant"]
    if not replies or replies[-1].id != pending.get("messageId"):
        return "the pending reply is not the history's last reply"
    position = history.index(replies[-1])
    users = [m for m in history[:position] if m.role == "user"]
    if not users or users[-1].id != pending.get("userMessageId"):
        return "the pending reply's user message is not in the history"
    if digest(users[-1].text) != pending.get("userContentHash"):
        return "the pending reply's user message was edited"
    return ""
