"""The MCP door: Streamable HTTP, idle streams, the conformance suite."""
