"""Small MCP servers (written with the `mcp` SDK's MCPServer, formerly FastMCP) for the tests."""
