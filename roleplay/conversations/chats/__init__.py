"""Chat files from other tools, read into messages a conversation can hold (pure)."""
