"""Typed services on `ToolContext`: tools name what they use (`ctx.services.sandbox`, …)
instead of looking it up by key on the workspace; the settings-made services are stored in a
typed field (`Workspace.services`), not under `Attachment` keys."""

from __future__ import annotations

import ast
from pathlib import Path

from agentls.agent.framework.context import ToolContext
from agentls.sandbox import SandboxConfig, SandboxService, use_sandbox
from agentls.sandbox.settings import SandboxSettings
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.secrets import SecretMatcher

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "agentls"

LOOKUPS = {
    "sandbox_of",
    "secrets_for",
    "read_roots_of",
    "child_env_of",
    "editor_files_of",
    "host_terminal_of",
    "code_intel_for",
    "checks_of",
}

REMOVED_SETTERS = {
    "use_secrets",
    "use_read_roots",
    "use_child_env",
    "use_editor_files",
    "use_host_terminal",
    "set_checks",
}
"""The setters hosts called to store a service under a key; the runtime sets
`Workspace.services` instead."""

CACHE_KEYS = {
    "symbol index",
    "shadow copies",
    "web_fetch cache",
    "grep file lists",
    "background commands",
}
"""`Attachment` is for caches: state a workspace builds up and drops on close."""

NOT_YET_TYPED = {
    "sandbox",
    "code intelligence",
    "skills",
    "sub-agent types",
    "lint and tests settings of the checks",
}
"""Services of layers above `workspace/` (sandbox, codeintel, agent, tools), still stored
under a key: `Workspace.services` cannot name their types without an import cycle. They
move once the runtime hands `ToolContext` its services (docs/architecture.md). The list
may only shrink."""


def test_a_context_offers_the_services_the_runtime_set_up(tmp_path: Path) -> None:
    workspace = Workspace([tmp_path])
    ctx = ToolContext(session_id="s", workspace=workspace, changes=ChangeSet())
    matcher = SecretMatcher(patterns=("*.key",), exceptions=())
    workspace.services.secrets = matcher
    workspace.services.set_read_roots([tmp_path / "docs"])
    workspace.services.set_environment({"PIP_INDEX_URL": "http://mirror"})
    use_sandbox(workspace, SandboxConfig(SandboxSettings(enabled=False)))
    services = ctx.services
    assert services.secrets is matcher
    assert services.read_roots == ((tmp_path / "docs").resolve(),)
    assert services.environment == {"PIP_INDEX_URL": "http://mirror"}
    assert isinstance(services.sandbox, SandboxService)
    assert services.sandbox.place("run_command").sandboxed is False
    assert services.editor_files is None  # an LSP editor pushes its buffers
    assert services.terminal is None


def test_a_settings_reload_reaches_a_context_already_made(tmp_path: Path) -> None:
    """A run keeps its context; the settings it sees are the current ones, as before."""
    workspace = Workspace([tmp_path])
    ctx = ToolContext(session_id="s", workspace=workspace, changes=ChangeSet())
    assert ctx.services.secrets.match(str(tmp_path / "notes.cfg")) is None
    workspace.services.secrets = SecretMatcher(patterns=("*.cfg",), exceptions=())
    assert ctx.services.secrets.match(str(tmp_path / "notes.cfg")) == "*.cfg"


def test_no_tool_looks_a_service_up_on_its_contexts_workspace() -> None:
    """`secrets_for(ctx.workspace)` and the like are what `ctx.services` replaced."""
    found = []
    for folder in ("tools", "agent"):
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                    continue
                if node.func.id in LOOKUPS and any(
                    ast.unparse(arg) == "ctx.workspace" for arg in node.args
                ):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.func.id}")
    assert found == []


def _attachment_keys() -> dict[str, str]:
    """Every `Attachment("name")` / `Attachment[T]("name")` made in the server: name → where."""
    keys: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func.value if isinstance(node.func, ast.Subscript) else node.func
            if isinstance(func, ast.Name) and func.id == "Attachment":
                name = node.args[0]
                assert isinstance(name, ast.Constant), f"{path}:{node.lineno}"
                keys[str(name.value)] = f"{path.relative_to(PACKAGE)}:{node.lineno}"
    return keys


def test_attachment_keys_are_caches_and_no_new_service_is_stored_under_a_key() -> None:
    keys = _attachment_keys()
    assert set(keys) >= CACHE_KEYS  # the check sees them (so it would see a new one)
    assert {k: v for k, v in keys.items() if k not in CACHE_KEYS | NOT_YET_TYPED} == {}


def test_the_settings_made_services_have_no_key_and_no_setter() -> None:
    """Secrets, read roots, environment, editor files, terminal and the checks settings live
    in `Workspace.services`; nothing defines or calls the old setters and lookups."""
    gone = REMOVED_SETTERS | (LOOKUPS - {"sandbox_of", "code_intel_for"})
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = None
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                name = node.name
            elif isinstance(node, ast.Name):
                name = node.id
            if name in gone:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {name}")
    assert found == []


def test_the_runtime_sets_the_workspace_services_from_settings_and_ports(tmp_path: Path) -> None:
    """One typed object per workspace, filled by the runtime: no key to look up."""
    from agentls.runtime.config_state import ConfigState
    from agentls.runtime.ports import HostPorts
    from agentls.runtime.runtime import AgentRuntime

    class Files:
        async def read(self, session_id: str, path: Path) -> str | None:
            return None

    files = Files()
    workspace = Workspace([tmp_path])
    runtime = AgentRuntime(ConfigState(), workspace, HostPorts(editor_files=files))
    assert workspace.services.editor_files is files
    assert runtime.reload_safety() is not None
    assert workspace.services.secrets.match(str(tmp_path / ".env")) is not None
    runtime.tools(workspace)
    assert workspace.services.checks is runtime.config.current.checks
