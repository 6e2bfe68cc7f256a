"""The registered capabilities, one module each; importing this package registers them
(``roleplay.apps`` does at start). Add a module and its import below."""

from . import bounded_runtime, http_tool, mcp_tool  # noqa: F401
