"""Compact's pure rules (no Django): when compaction is due (``budget``), what a checkpoint
holds and when it still holds (``checkpoint``), the history's groups (``groups``), and the
compactor's input and answer (``protocol``)."""
