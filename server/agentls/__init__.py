"""agentls: a language server that runs a Claude-Code-style coding agent for any LSP editor."""

__version__ = "0.1.0"
