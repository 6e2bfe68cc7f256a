"""The registered capabilities, one module each; importing this package registers them
(``roleplay.apps`` does at start). Add a module and its import below."""

from roleplay.workflows.capabilities import http_tool  # noqa: E402, F401
