"""The runtime: one way to build a session's parts, whatever the host.

- `runtime.AgentRuntime`: safety, tools, MCP, code intelligence, skills and model settings
  of one workspace, from its settings and the host's ports (`ports.HostPorts`);
- `config_state.ConfigState`: a host's layered settings (environment, project, user);
- `trust_gate.TrustGate`: assessing, remembering and asking about workspace trust.

Part of the core: it never imports a host (`agentls.lsp`, `agentls.acp`,
`agentls.headless`, `agentls.host`) or the LSP libraries. Nothing is imported here, so
importing `agentls.runtime.config_state` stays cheap (pydantic loads on first use).
"""
