"""Recall over the stored transcript (issue 11, first part): the index of every user and
assistant message (``indexing``) and the search a player's recall runs (``search``)."""
