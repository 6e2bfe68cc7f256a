"""Writes of the images capability, one module per concept: configs, the asset tool's jobs,
chat image slots (and their files)."""
