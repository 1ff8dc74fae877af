"""Typed services on `ToolContext`: tools name what they use (`ctx.services.sandbox`, …)
instead of looking it up by key on the workspace. One `ToolServices` per workspace, built by
the runtime and passed into every context; `workspace/`'s own services are a typed field
(`Workspace.services`); `Attachment` keys are for caches only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.services import CheckTools, ToolServices
from agentls.sandbox import SandboxConfig, SandboxService
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
    "installed_code_intel",
    "skills_of",
    "agents_for",
}

REMOVED_SETTERS = {
    "use_secrets",
    "use_read_roots",
    "use_child_env",
    "use_editor_files",
    "use_host_terminal",
    "set_checks",
    "use_sandbox",
    "install_code_intel",
    "use_skills",
    "set_check_tools",
}
"""The setters hosts called to store a service under a key; the runtime sets
`Workspace.services` and its `ToolServices` instead."""

CACHE_KEYS = {
    "symbol index",
    "shadow copies",
    "web_fetch cache",
    "grep file lists",
    "background commands",
}
"""`Attachment` is for caches only: state a workspace builds up and drops on close. A
service (what settings or a host give) is a typed field of `ToolServices` or
`Workspace.services` instead; a key that is not one of these fails the test below."""


def test_a_context_offers_the_services_the_runtime_set_up(tmp_path: Path) -> None:
    workspace = Workspace([tmp_path])
    given = ToolServices(workspace)
    ctx = ToolContext(session_id="s", workspace=workspace, changes=ChangeSet(), services=given)
    matcher = SecretMatcher(patterns=("*.key",), exceptions=())
    workspace.services.secrets = matcher
    workspace.services.set_read_roots([tmp_path / "docs"])
    workspace.services.set_environment({"PIP_INDEX_URL": "http://mirror"})
    given.sandbox.config = SandboxConfig(SandboxSettings(enabled=False))
    services = ctx.for_call("toolu_1").services
    assert services is given  # one object, kept by every call's context
    assert services.secrets is matcher
    assert services.read_roots == ((tmp_path / "docs").resolve(),)
    assert services.environment == {"PIP_INDEX_URL": "http://mirror"}
    assert isinstance(services.sandbox, SandboxService)
    assert services.sandbox.place("run_command").sandboxed is False
    assert services.editor_files is None  # an LSP editor pushes its buffers
    assert services.terminal is None
    assert services.skills.skills == []  # none until the host discovers them
    assert services.check_tools == CheckTools()


def test_a_context_made_on_its_own_gets_the_defaults(tmp_path: Path) -> None:
    """A test or script that makes a context without services: sandbox on, no skills."""
    ctx = ToolContext(session_id="s", workspace=Workspace([tmp_path]), changes=ChangeSet())
    assert ctx.services.workspace is ctx.workspace
    assert ctx.services.sandbox.settings.enabled
    assert ctx.services.skills.names == []
    assert ctx.for_call("toolu_1").services is ctx.services


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


def _attachment_keys(package: Path = PACKAGE) -> dict[str, str]:
    """Every `Attachment("name")` / `Attachment[T]("name")` made in the server: name → where."""
    keys: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func.value if isinstance(node.func, ast.Subscript) else node.func
            if isinstance(func, ast.Name) and func.id == "Attachment":
                name = node.args[0]
                assert isinstance(name, ast.Constant), f"{path}:{node.lineno}"
                keys[str(name.value)] = f"{path.relative_to(package)}:{node.lineno}"
    return keys


def test_attachment_keys_are_caches_and_no_service_is_stored_under_a_key() -> None:
    keys = _attachment_keys()
    assert set(keys) >= CACHE_KEYS  # the check sees them (so it would see a new one)
    assert {k: v for k, v in keys.items() if k not in CACHE_KEYS} == {}


def test_the_key_check_sees_a_service_stored_under_a_key(tmp_path: Path) -> None:
    """The scan above finds a key written either way, so a service put back under one fails."""
    (tmp_path / "back.py").write_text(
        'A = Attachment[object]("sandbox")\nB: Attachment[int] = Attachment("skills")\n',
        encoding="utf-8",
    )
    assert set(_attachment_keys(tmp_path)) == {"sandbox", "skills"}


def test_the_settings_made_services_have_no_key_and_no_setter() -> None:
    """Secrets, read roots, environment, editor files, terminal and the checks settings live
    in `Workspace.services`; the sandbox, code intelligence, skills, sub-agent types and the
    checks' tools in `ToolServices`; nothing defines or calls the old setters and lookups."""
    gone = REMOVED_SETTERS | LOOKUPS
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
    runtime.tools(runtime.services)
    assert workspace.services.checks is runtime.config.current.checks
    assert isinstance(runtime.services.check_tools, CheckTools)
    assert runtime.services.sandbox.settings is runtime.safety.sandbox  # type: ignore[union-attr]


SKILL = "---\nname: release\ndescription: Write release notes.\n---\nUse the changelog.\n"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude" / "skills" / "release").mkdir(parents=True)
    (root / ".claude" / "skills" / "release" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    return root


async def test_the_runtimes_services_reach_every_session_and_direct_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host hands the runtime's one object to its sessions (and their sub-agents) and to
    a direct tool call: what the runtime and the host set there is what tools see."""
    from agentls.host import AgentHost
    from agentls.runtime.config_state import ConfigState
    from agentls.runtime.runtime import AgentRuntime

    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no user skills
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-services-test")
    workspace = Workspace([_project(tmp_path)])
    runtime = AgentRuntime(ConfigState(), workspace)
    runtime.reload_safety()
    host = AgentHost(workspace, options=runtime)
    try:
        assert host.services is runtime.services
        loaded = await host.run_tool("skill", {"name": "release"})
        assert not loaded.is_error, loaded.content
        assert "Use the changelog." in str(loaded.content)
        assert runtime.services.skills.names == ["release"]
        session = host.new_session()
        assert session.config.services is runtime.services
        import asyncio

        ctx = session.tool_context("review", asyncio.Event())
        assert ctx.services is runtime.services
        assert host.status()["sandbox"] == runtime.services.sandbox.status()
    finally:
        await host.shutdown()


HOSTS = ("lsp", "acp", "headless")
BUILDERS = {"ToolServices", "CodeIntel", "AgentCatalog", "SkillCatalog", "CheckTools"}
FIELDS = {"sandbox", "code_intel", "skills", "agents", "check_tools"}
DIAGNOSTICS: set[str] = set()
"""None: `agentls doctor` reports from the runtime a session would get (issue 26)."""


def test_no_host_builds_or_sets_the_services() -> None:
    """Only the runtime (and `AgentHost`, from the runtime's options) makes and fills them;
    `lsp/`, `acp/` and `headless/` reach them through the runtime."""
    found = []
    for folder in HOSTS:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            if str(path.relative_to(PACKAGE)) in DIAGNOSTICS:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                where = f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', 0)}"
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    if node.func.id in BUILDERS:
                        found.append(f"{where} {node.func.id}()")
                elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        text = ast.unparse(target)
                        if (
                            isinstance(target, ast.Attribute)
                            and target.attr in FIELDS
                            and (".services." in f".{text}")
                        ):
                            found.append(f"{where} {text} =")
    assert found == []
