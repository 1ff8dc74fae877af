"""Editor-agnostic agent core, in subpackages that import one way only (bottom up):
`protocol` (messages, events, usage, results), `rules`, `claude` (Claude Code's files),
`framework` (the tool framework), `permissions`, `hooks`, `persistence` and `run` (the
session, the loop, the pipeline, model clients); `settings` and `safety` sit beside them.
See docs/architecture.md, "Inside `agent/`".

Nothing in this package imports pygls or lsprotocol; the LSP server, the CLI and the tests
are three hosts of the same core.
"""
