"""The registered capabilities, one module each; importing this package registers them
(``roleplay.apps`` does at start). Add a module and its import below."""

from . import (  # noqa: F401
    bounded_runtime,
    http_tool,
    mcp_tool,
    memory_recall,
    model_call,
    state_read,
    worldbook_search,
)
