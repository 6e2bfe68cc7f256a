"""The player app's home (``/app/``): the character library, a player's own characters,
their chats, personas and memory, each page scoped to the signed-in player."""
