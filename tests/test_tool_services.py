"""Typed services on `ToolContext`: tools name what they use (`ctx.services.sandbox`, …)
instead of looking it up by key on the workspace."""

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
}


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
    """`ctx.workspace.services.secrets` and the like are what `ctx.services` replaced."""
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
