"""The registered capabilities, one module each; importing this package registers them
(``roleplay.apps`` does at start). Add a module and its import below."""

import roleplay.workflows.capabilities.http_tool  # noqa: F401
import roleplay.workflows.capabilities.mcp_tool  # noqa: F401
