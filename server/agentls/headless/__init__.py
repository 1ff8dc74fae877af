"""Headless CLI: run, ask, tools, tool, doctor, demo (an LSP client of `agentls serve`)."""
