"""Group chats: several characters in one conversation, who speaks next, and the speaking
character's prompt (docs/groups.md)."""
