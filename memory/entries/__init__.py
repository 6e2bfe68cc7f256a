"""Memory entries (seeds 003 and 004): ``services`` writes them, ``selectors`` reads them; the
rules of what an entry holds are the pure ``memory.engine.entries``."""
