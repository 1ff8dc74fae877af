"""The LSP host of the agent: a thin pygls layer over `agentls.host.AgentHost`.

Handlers adapt LSP to the core (get the document, call a core function, convert, return)
and hold no agent logic. `create_server()` builds a server; each feature module registers
its handlers in a `setup(server)` function.
"""
