"""Agent V2's REST doors: a conversation's state and its planning runs (mixed into the
conversation viewset, ``roleplay.api.views``)."""
