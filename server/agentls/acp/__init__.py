"""The ACP host of the agent: `agentls acp`, for Agent Client Protocol clients.

A third host of `agentls.host.AgentHost`, next to the LSP server (`agentls.lsp`) and the
CLI (`agentls.headless`), and as thin: it adapts ACP (on the official `agent-client-protocol`
SDK) to the core and holds no agent logic. `agent` maps the methods, `workspace` plugs the
client into the core's ports, `reporter` turns events into `session/update`s, `delivery`
writes edits, `approvals` asks for permission, `mapping` and `replay` convert. See
docs/acp.md.
"""
