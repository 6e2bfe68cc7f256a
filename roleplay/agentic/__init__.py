"""Agent V2: scenarios and the background continuity engine (seed 002, lines 3–240)."""
