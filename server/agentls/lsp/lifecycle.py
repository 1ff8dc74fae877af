"""initialize / initialized / configuration / shutdown.

`initialize` only records what the client can do, so the response goes out as fast as a
bare pygls server's; the agent host (workspace, configuration, tools) is built on
`initialized`. The model SDK is not imported here: the first run imports it off the loop
(`agentls.host`), so tool calls and shutdown never wait on it (issue 33).
"""

from __future__ import annotations

import asyncio
import importlib
import logging

from lsprotocol import types

from agentls.lsp.capabilities import ClientFeatures
from agentls.lsp.contract import Connection
from agentls.lsp.gc_freeze import freeze_long_lived
from agentls.lsp.sync import push_buffer

log = logging.getLogger(__name__)

HOST_IMPORTS = (
    "agentls.host",
    "agentls.lsp.arguments",
    "agentls.lsp.actions",
    "agentls.tools",
    "agentls.agent.safety",
    "agentls.lsp.safety",
    "agentls.runtime.config_state",
    "agentls.runtime.runtime",
    "agentls.lsp.approvals",
    "agentls.lsp.questions",
    "agentls.lsp.port",
    "agentls.workspace",
    "agentls.config.environment",
    "agentls.lsp.code_intel",
    "agentls.langservers",
    "agentls.agent.claude.trust",
    "agentls.lsp.trust",
)
INDEX_IMPORTS = ("agentls.workspace", "agentls.index")
"""What symbol requests need: imported and started before the rest of the host."""
INDEX_HEAD_START_S = 1.0
"""The host's imports wait at most this long for the index to serve (warm: its cache)."""


def setup(server: Connection) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: Connection, params: types.InitializeParams) -> None:
        ls.features = ClientFeatures.of(params.capabilities, ls.workspace.position_encoding)
        ls.initialization_options = params.initialization_options

    @server.feature(types.INITIALIZED)
    async def initialized(ls: Connection, params: types.InitializedParams) -> None:
        # the core's modules take a second or more to import: not on the event loop. The
        # workspace and its symbol index come first, so symbol requests need not wait for
        # the rest of the host.
        from agentls.lsp.symbols import allow_index_persistence, index_serving, start_index

        on_demand = ls.features.index_on_demand  # no tree-sitter until a request needs it
        await asyncio.to_thread(_import_all, INDEX_IMPORTS[:1] if on_demand else INDEX_IMPORTS)
        start_index(ls)
        await index_serving(ls, INDEX_HEAD_START_S)
        await asyncio.to_thread(_import_all, HOST_IMPORTS)
        start_agent(ls)
        ls.agent_workspace.start_warm_up(secrets=True)  # the user's secret rules are loaded
        # opened while we were importing; by the editor's URI (pygls keys them unquoted)
        for document in list(ls.workspace.text_documents.values()):
            push_buffer(ls, document.uri)
        if ls.workspace.notebook_documents:  # notebooks too (issue 15)
            from agentls.lsp.notebooks import push_notebook

            for notebook in list(ls.workspace.notebook_documents.values()):
                push_notebook(ls, notebook.uri)
        ls.ready.set()
        freeze_long_lived()  # start-up's objects: out of full collections (issue 33)
        allow_index_persistence(ls)  # the user's secret rules are loaded now
        from agentls.lsp.watch import start_watching

        await start_watching(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: Connection, params: types.DidChangeConfigurationParams
    ) -> None:
        settings = params.settings
        source = "workspace/didChangeConfiguration"
        if settings is None and ls.features.configuration:
            # the pull model: the notification only says "something changed"
            settings = await pull_configuration(ls)
            source = "workspace/configuration"
        problems = ls.config.set_editor(settings, source)
        if ls.has_host:
            from agentls.lsp.safety import reload_safety
            from agentls.lsp.trust import refresh_trust, start_trust_prompt

            problems += refresh_trust(ls)  # `trustProjectSettings` may have changed
            problems += reload_safety(ls)
            ls.host.settings_changed()
            start_trust_prompt(ls)
        ls.report_problems(problems)
        ls.log_line(f"agentls: configuration updated (mode={ls.config.current.mode})")

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: Connection, params: None) -> None:
        if ls.watch_task is not None:
            ls.watch_task.cancel()
        if ls.has_host:
            await ls.host.shutdown()


def start_agent(ls: Connection) -> None:
    """Build configuration, the runtime and the agent host for this connection's workspace."""
    from agentls.host import AgentHost
    from agentls.lsp.agents import watch_agent_files
    from agentls.lsp.port import LspPort
    from agentls.lsp.safety import lsp_ports
    from agentls.lsp.trust import refresh_trust, start_trust_prompt
    from agentls.runtime.runtime import start_runtime
    from agentls.workspace import Workspace

    roots = ls.roots()
    workspace = ls.agent_workspace if ls.has_workspace else Workspace(roots)
    editor = None  # a configuration change came while starting: its section is set
    if "editor" not in ls.config.layers:
        editor = (ls.initialization_options, "initializationOptions")
    ls.runtime, problems = start_runtime(
        ls.config, workspace, lsp_ports(ls), editor=editor, trust=lambda: refresh_trust(ls)
    )
    ls.host = AgentHost(workspace, LspPort(ls), ls.runtime)
    watch_agent_files(ls)
    problems += [f"skills: {p}" for p in ls.host.refresh_skills()]  # skipped skills (issue 15)
    ls.report_problems(problems)
    start_trust_prompt(ls)
    ls.runtime.mcp.start_soon()  # with `mcp.startup: "eager"`
    log.info("agentls ready for %s", ", ".join(str(r) for r in roots))


async def pull_configuration(ls: Connection) -> object:
    """The `agentls` section via `workspace/configuration`; None when the client fails."""
    try:
        result = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="agentls")])
        )
    except Exception as exc:
        log.info("workspace/configuration failed: %s", exc)
        return None
    return result[0] if result else None


def _import_all(names: tuple[str, ...]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:
            log.debug("import of %s failed: %s", name, exc)
