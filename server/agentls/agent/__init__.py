"""Editor-agnostic agent core: tools, pool, pipeline, orchestration, model client and loop.

Nothing in this package imports pygls or lsprotocol; the LSP server, the CLI and the tests
are three hosts of the same core.
"""
