"""Whose DIO prompt a conversation reads and writes: one rule for every door (the turn, the
front loop's ``schedule_dio``, the operators' ``POST …/dio/`` and page), so a submission
and the later reads always name the same prompt.

- ``userId``: the conversation's player id;
- ``conversationId``: the conversation id;
- ``targetPromptId``: ``character:<character id>``. DIO rewrites the character prompt, and
  the prompt it compiles is the character's as this conversation plays it; the Actor
  preset's slot (``roleplay`` prompt or ``{{getvar::systemPrompt}}``) is where it goes, not
  what it is, so changing presets does not orphan a player's instructions.
"""

from __future__ import annotations

from roleplay.dio.engine.ports import Identity

TARGET_PREFIX = "character:"


def target_prompt_id(character_id: object) -> str:
    return f"{TARGET_PREFIX}{character_id}"


def identity_for(conversation) -> Identity:
    """The DIO identity of ``conversation`` (any object with ``player_id``, ``pk`` and
    ``character_id``: a ``Conversation`` row; no query)."""
    return Identity(
        user_id=str(conversation.player_id),
        conversation_id=str(conversation.pk),
        target_prompt_id=target_prompt_id(conversation.character_id),
    )
