"""Whose DIO prompt a conversation reads and writes: one rule for every door (the turn, the
front loop's ``schedule_dio``, the operators' ``POST …/dio/`` and page, the seed's protocol),
so a submission and the later reads always name the same prompt.

- ``userId``: the player's ``external_id``, the id an integration knows its player by (the
  protocol's ``?userId=`` is that id);
- ``conversationId``: the conversation id;
- ``targetPromptId``: the character's id, unless a door names another. DIO rewrites the
  character prompt, and the prompt it compiles is the character's as this conversation
  plays it; the Actor preset's slot (``roleplay`` prompt or ``{{getvar::systemPrompt}}``) is
  where it goes, not what it is, so changing presets does not orphan a player's
  instructions.
"""

from __future__ import annotations

from roleplay.dio.engine.ports import Identity


def identity_for(conversation, target_prompt_id: str | None = None) -> Identity:
    """The DIO identity of ``conversation`` (a ``Conversation`` row; its player is read once
    unless already loaded, as the turn's context has it)."""
    return Identity(
        user_id=conversation.player.external_id,
        conversation_id=str(conversation.pk),
        target_prompt_id=target_prompt_id or str(conversation.character_id),
    )
