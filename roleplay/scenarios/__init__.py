"""Run modes (scenarios) in the console: the guided form per capability (``forms``, built
from ``guide`` and the one-sentence ``help``), and the pages (``views``). The scenario's
config classes still live in ``roleplay.scenarios.config`` (docs/architecture.md)."""
