"""Compact (seed 002, lines 1061–1149): older history folded into a summary so a long chat
fits the model's window. Pure modules; the turn's phase is ``roleplay.compact_phase``."""
