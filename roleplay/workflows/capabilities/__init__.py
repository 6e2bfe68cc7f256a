"""The registered capabilities, one module each; importing this package registers them
(``roleplay.apps`` does at start). Add a module and its import below."""

from . import memory_recall, model_call, state_read, worldbook_search  # noqa: F401
