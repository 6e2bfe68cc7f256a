"""Handoffs between personas (seed 004): services write, selectors read."""
