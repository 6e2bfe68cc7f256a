"""What an operator lets a workflow call from outside: HTTP endpoints and MCP servers (their
registration, reads, REST and console pages, and the calls' shared limits). The two
capabilities that use them are ``roleplay.workflows.capabilities.http_tool`` and
``mcp_tool``; their input rules are ``roleplay.workflows.engine.tool_inputs``."""
