"""Agent V2's writes: its state (revisions, restore, withdrawal) and the planning runs."""
