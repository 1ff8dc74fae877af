"""Code intelligence for the agent: definitions, references, hover, diagnostics, rename.

The core of it, editor-agnostic and free of LSP libraries: the `CodeSource` port
(`sources`), the service that asks the sources in order (`service`), the index-by-name
fallback (`index_source`), server discovery (`discovery`) and the `languageServers` model
(`settings`). The LSP host plugs in the editor bridge (`agentls.lsp.editor_queries`) and the
language-server pool (`agentls.langservers`). Submodules are imported directly, so reading
the settings model does not load the index.
"""
