"""Compact's writes: saving a checkpoint version (``checkpoints``), the operator's actions
(``edits``), what a change of the stored history does to the checkpoints (``history``), and
the next checkpoint prepared in the background (``prepare``)."""
