"""JSON memory documents (seed 000): ``services`` writes them, ``selectors`` reads them; the
rules of what a document holds are the pure ``memory.engine.documents``."""
