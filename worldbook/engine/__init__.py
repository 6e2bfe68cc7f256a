"""Pure worldbook engine: schema, keyword matching and per-turn selection (no Django)."""
