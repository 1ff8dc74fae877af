"""`agentls doctor`: what a newcomer needs, checked one by one with a clear verdict.

Essential checks (a failure → exit 1): Python version, the packages agentls runs on,
credentials and a tiny real request to the Messages-API endpoint. Warnings: the sandbox
(bubblewrap missing, no user namespaces: with the fix), workspace trust (the project's own
settings that loosen safety and are held back until the user trusts the workspace), MCP
servers that fail to start, await approval or are misconfigured. Informational: linters and
test runners (what `lint` and `run_tests` would use in the workspace, and why), editor
clients, the symbol-index cache of the workspace.

Everything about the workspace is read from the runtime a session there would get
(`agentls.runtime.runtime.start_runtime`, as the language server and the ACP agent build
it, with the user's settings at their defaults and nobody to ask): the model and endpoint
of its requests, its trust decision, the problems it would show, the sandbox settings,
`lint` / `tests` entries, `web_search`, skills, commands, sub-agent types,
language-server settings and MCP servers. So the doctor cannot disagree with a session
(tests/test_hosts_use_the_runtime.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from agentls.agent.claude.trust import WorkspaceTrust
    from agentls.runtime.runtime import AgentRuntime
    from agentls.sandbox import SandboxService

Status = Literal["ok", "warn", "fail", "info"]
MIN_PYTHON = (3, 11)
PACKAGES = ("agentls", "pygls", "lsprotocol", "anthropic", "pydantic", "rich", "tree-sitter")
TOOLS = {"ruff": "linter (Python)", "pytest": "test runner (Python)"}
EDITORS = {
    "nvim": "Neovim",
    "code": "VS Code",
    "code-server": "VS Code (code-server)",
    "hx": "Helix",
    "emacs": "Emacs",
}


@dataclass
class Check:
    group: str
    name: str
    status: Status
    detail: str
    essential: bool = False


@dataclass
class SessionParts:
    """The runtime a session in the workspace would get, and what building it said."""

    runtime: AgentRuntime
    trust: WorkspaceTrust | None
    problems: list[str]
    """Every settings problem a session would show at start-up."""


def session_parts(workspace: Path, timeout: float = 15.0) -> SessionParts:
    """Build the runtime the way every host does (`start_runtime`), with the user's
    settings at their defaults but `--timeout` as the MCP servers' start-up limit, and
    nobody to ask (unapproved `.mcp.json` servers stay off; their line says how)."""
    from agentls.runtime.config_state import ConfigState
    from agentls.runtime.ports import HostPorts
    from agentls.runtime.runtime import start_runtime
    from agentls.runtime.trust_gate import TrustGate
    from agentls.workspace import Workspace

    root = workspace.resolve()
    config, gate = ConfigState(), TrustGate()

    def trust() -> list[str]:
        gate.refresh(config, [root], reload_project=False)
        return []

    section = {"mcp": {"startupTimeoutSeconds": max(1.0, timeout)}}
    runtime, problems = start_runtime(
        config,
        Workspace([root]),
        HostPorts(),  # nobody to ask: unapproved `.mcp.json` servers stay off
        editor=(section, "agentls doctor"),
        trust=trust,
    )
    return SessionParts(runtime, gate.trust, problems)


def _which(name: str) -> str | None:
    """On PATH, or next to this interpreter (a virtualenv that is not activated)."""
    found = shutil.which(name)
    if found:
        return found
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() and os.access(beside, os.X_OK) else None


def _version_of(executable: str) -> str:
    try:
        done = subprocess.run(
            [executable, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if lines else ""


def check_python() -> list[Check]:
    version = ".".join(map(str, sys.version_info[:3]))
    ok = sys.version_info[:2] >= MIN_PYTHON
    need = ".".join(map(str, MIN_PYTHON))
    detail = f"{version} ({sys.executable})" + ("" if ok else f"; agentls needs {need} or newer")
    return [Check("python", "Python", "ok" if ok else "fail", detail, essential=True)]


def check_packages() -> list[Check]:
    checks = []
    for name in PACKAGES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            checks.append(
                Check("packages", name, "fail", "not installed (pip install -e .)", essential=True)
            )
            continue
        checks.append(Check("packages", name, "ok", version, essential=True))
    return checks


def check_endpoint(runtime: AgentRuntime, timeout: float) -> list[Check]:
    """Credentials present, then one tiny request through the official SDK, with the
    settings a session would have (`AgentRuntime.settings`: the model, endpoint and
    headers of the layered settings and Claude Code's files, the environment's key)."""
    from agentls.agent.settings import ConfigError

    try:
        settings = runtime.settings()
        settings.require_credentials()
    except ConfigError as exc:
        return [Check("model", "credentials", "fail", str(exc), essential=True)]
    endpoint = settings.base_url or "https://api.anthropic.com"
    source = (
        "ANTHROPIC_API_KEY"
        if settings.api_key
        else "ANTHROPIC_AUTH_TOKEN"
        if settings.auth_token
        else "none (local endpoint)"
    )
    checks = [Check("model", "credentials", "ok", f"{source}; endpoint {endpoint}", essential=True)]
    status, detail = ping(settings, timeout)
    checks.append(Check("model", f"request to {settings.model}", status, detail, essential=True))
    return checks


def ping(settings: object, timeout: float) -> tuple[Status, str]:
    import anthropic

    from agentls.agent.run.model_client import client_options
    from agentls.agent.settings import AgentSettings

    assert isinstance(settings, AgentSettings)
    endpoint = settings.base_url or "https://api.anthropic.com"
    # the same credential headers and custom headers as a session's requests
    client = anthropic.Anthropic(**{**client_options(settings), "timeout": timeout})
    started = time.monotonic()
    try:
        client.messages.create(
            model=settings.model,
            max_tokens=1,
            messages=[{"role": "user", "content": "ping"}],
        )
    except anthropic.AuthenticationError:
        return "fail", (
            f"401 Unauthorized from {endpoint}: the API key was rejected. Check "
            "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN); keys start with sk-ant-."
        )
    except anthropic.PermissionDeniedError as exc:
        return (
            "fail",
            f"403 Forbidden from {endpoint}: the key may not use this model ({_msg(exc)})",
        )
    except anthropic.NotFoundError as exc:
        return "fail", (
            f"404 Not Found from {endpoint}: either ANTHROPIC_BASE_URL is wrong (it should be the "
            f"server root, without /v1/messages) or the model {settings.model!r} does not exist "
            f"there (set AGENTLS_MODEL). Server said: {_msg(exc)}"
        )
    except anthropic.APITimeoutError:
        return "fail", f"no answer from {endpoint} within {timeout:.0f}s"
    except anthropic.APIConnectionError as exc:
        cause = exc.__cause__ or exc
        reason = str(cause) or type(cause).__name__
        return "fail", (
            f"cannot connect to {endpoint} ({reason}): is the server running and the URL right? "
            "Connection refused means nothing listens there."
        )
    except anthropic.RateLimitError:
        return "warn", f"429 from {endpoint}: the key works but is rate limited right now"
    except anthropic.APIStatusError as exc:
        if exc.status_code in (529, 500, 502, 503):
            return (
                "warn",
                f"{exc.status_code} from {endpoint}: reachable, but overloaded or failing",
            )
        return "fail", f"{exc.status_code} from {endpoint}: {_msg(exc)}"
    except Exception as exc:
        return "fail", f"the request failed: {type(exc).__name__}: {exc}"
    finally:
        client.close()
    return "ok", f"answered in {(time.monotonic() - started) * 1000:.0f} ms"


def _msg(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(exc)


def check_tools() -> list[Check]:
    checks = []
    for name, role in TOOLS.items():
        path = _which(name)
        if path is None:
            checks.append(Check("tools", name, "warn", f"not found: the {role} is unavailable"))
        else:
            checks.append(Check("tools", name, "ok", f"{_version_of(path) or 'found'} ({path})"))
    return checks


def check_sandbox(sandbox: SandboxService) -> list[Check]:
    """Whether run_command, run_tests and lint can run sandboxed here (docs/sandbox.md):
    the runtime's sandbox (`services.sandbox`), with the workspace's settings."""
    status = sandbox.status()
    if not status["enabled"]:
        return [Check("sandbox", "sandbox", "warn", str(status["message"]))]
    if not status["available"]:
        fallback = status["fallback"]
        pairs = fallback.items() if isinstance(fallback, dict) else []
        modes = ", ".join(f"{tool}: {mode}" for tool, mode in pairs)
        return [
            Check(
                "sandbox",
                "sandbox",
                "warn",
                f"{status['message']} Until then (defaults): {modes}.",
            )
        ]
    detail = f"{status['message']}; limits: {status['limits'] or 'rlimits'}; network off"
    return [Check("sandbox", "sandbox", "ok", detail + " unless allowed in settings")]


def check_workspace_checks(parts: SessionParts) -> list[Check]:
    """The linters and test runners `lint` / `run_tests` would use in this workspace: each
    with the file that chose it, and the install command when its program is missing. The
    entries are the runtime's (a project file's apply once the workspace is trusted); the
    editor's are not known here."""
    runtime = parts.runtime
    root = runtime.workspace.roots[0]
    try:
        from agentls.runtime.config_state import check_entries
        from agentls.tools.checks.overview import overview

        lint, tests = check_entries(runtime.config)
        files = [Path(p) for p in runtime.workspace.file_strs()]
        rows = overview([root], files, list(lint), list(tests))
    except Exception as exc:  # a broken project must not stop the other checks
        return [Check("lint", "detection", "warn", f"could not inspect {root}: {exc}")]
    problems = runtime.config.project_source.problems
    checks = [Check("lint", "settings", "warn", str(p)) for p in problems]
    checks += [Check(r.kind, r.name, r.status, r.detail) for r in rows]
    if not rows:
        checks.append(
            Check("lint", "detection", "info", f"no project files in {root} to detect from")
        )
    return checks


def check_editors() -> list[Check]:
    checks = []
    for name, label in EDITORS.items():
        path = shutil.which(name)
        detail = (
            f"{label}: {_version_of(path) or 'found'} ({path})" if path else f"{label}: not found"
        )
        checks.append(Check("editors", name, "info", detail))
    return checks


def check_index(workspace: Path) -> list[Check]:
    try:
        from agentls.index.store import default_cache_path

        path = default_cache_path([workspace])
    except Exception as exc:
        return [Check("index", "symbol index", "info", f"unknown ({exc})")]
    if not path.exists():
        return [
            Check(
                "index",
                "symbol index",
                "info",
                f"not built yet for {workspace} (built on first use)",
            )
        ]
    size = path.stat().st_size
    age = time.time() - path.stat().st_mtime
    return [
        Check(
            "index",
            "symbol index",
            "info",
            f"cached for {workspace}: {size / 1024:.0f} KiB, "
            f"updated {age / 60:.0f} min ago ({path})",
        )
    ]


def check_language_servers(parts: SessionParts) -> list[Check]:
    """Which language servers code intelligence would start (settings, then discovery),
    from the runtime's `languageServers` settings and trust decision."""
    runtime = parts.runtime
    root = runtime.workspace.roots[0]
    try:
        from agentls.codeintel.report import language_server_lines, workspace_language_lines
        from agentls.runtime.code_sources import LanguageServerSettingsReader

        settings = LanguageServerSettingsReader(runtime.config).language_servers()
        lines = language_server_lines(root, settings)
        trusted = runtime.config.project_trusted
        present = workspace_language_lines(root, settings, trusted)
    except Exception as exc:
        return [Check("language servers", "discovery", "warn", f"failed: {exc}")]
    return [
        *(Check("language servers", name, status, detail) for name, status, detail in lines),
        *(Check("languages", name, status, detail) for name, status, detail in present),
    ]


def check_trust(parts: SessionParts) -> list[Check]:
    """Whether the workspace's own settings that loosen safety apply, and what is held
    back (docs/security.md#workspace-trust): the runtime's trust decision."""
    trust = parts.trust
    if trust is None:
        return [Check("trust", "workspace trust", "warn", "cannot tell")]
    if trust.trusted:
        return [Check("trust", "workspace trust", "ok", trust.summary())]
    fix = "" if trust.state == "disabled" else "; trust it with `agentls trust` (or --trust)"
    return [Check("trust", "workspace trust", "warn", trust.summary() + fix)]


def check_mcp(parts: SessionParts) -> list[Check]:
    """The MCP servers a session here would get (the runtime's): each started (within the
    timeout) and reported — ready with its tools, failed and why, awaiting approval and how
    to give it, or a configuration problem. The editor's own `mcp` settings are not known
    here."""
    import asyncio

    try:
        from agentls.headless.mcp_report import mcp_checks

        rows = asyncio.run(mcp_checks(parts.runtime.mcp))
    except Exception as exc:  # a broken configuration must not stop the other checks
        return [Check("mcp", "servers", "warn", f"could not check the MCP servers: {exc}")]
    return [Check("mcp", name, status, detail) for name, status, detail in rows]


def check_agents(parts: SessionParts) -> list[Check]:
    """The sub-agent types `task` offers (the runtime's), and each agent file that was
    skipped and why."""
    catalog = parts.runtime.services.agents
    checks = [
        Check("sub-agents", agent.name, "info", f"{agent.description[:80]} ({agent.source})")
        for agent in catalog.types()
    ]
    checks += [Check("sub-agents", "agent file", "warn", problem) for problem in catalog.problems]
    return checks


def check_web(parts: SessionParts) -> list[Check]:
    """Whether Anthropic's server-side web search is offered here, and why (or why not):
    the runtime's `web_search`, with its settings, endpoint and `WebSearch` rules."""
    try:
        offered, reason = parts.runtime.web_search().offered()
    except Exception as exc:
        return [Check("web", "web_search", "warn", f"could not tell: {exc}")]
    return [Check("web", "web_search", "ok" if offered else "info", reason)]


def check_prompt_files(parts: SessionParts) -> list[Check]:
    """The runtime's skills and custom commands for this workspace, and the files that
    were skipped."""
    runtime = parts.runtime
    skills = runtime.skills(runtime.workspace)
    commands = runtime.commands()
    names = ", ".join(skills.names) or "none"
    checks = [Check("skills", "skills", "info", f"{len(skills.skills)} found: {names}")]
    listed = ", ".join(f"/{c.name}" for c in commands.commands) or "none"
    checks.append(Check("skills", "commands", "info", f"{len(commands.commands)} found: {listed}"))
    checks += [
        Check("skills", "skipped", "warn", p) for p in [*skills.problems, *commands.problems]
    ]
    return checks


def check_plugins(workspace: Path) -> list[Check]:
    """Claude Code plugins enabled here: what each brings, and why any was skipped."""
    from agentls.agent.claude.plugins import load_plugins

    try:
        found = load_plugins([workspace])
    except Exception as exc:
        return [Check("plugins", "plugins", "warn", f"could not tell: {exc}")]
    if not found.plugins and not found.skipped:
        return [Check("plugins", "plugins", "info", "none enabled (enabledPlugins)")]
    checks = [Check("plugins", "plugin", "ok", plugin.summary()) for plugin in found.plugins]
    return checks + [Check("plugins", "skipped", "warn", why) for why in found.skipped]


def check_settings(parts: SessionParts) -> list[Check]:
    """What a session would warn about at start-up (bad settings, rules, hooks), but the
    project file's own problems and the missing sandbox, which lines of their own show."""
    config = parts.runtime.config
    own = config.project_source.problems
    shown = {str(p) for p in own} | {str(p.resolved(config.current)) for p in own}
    shown.update(parts.runtime.sandbox_warning())
    return [Check("settings", "problem", "warn", p) for p in parts.problems if p not in shown]


def run_checks(workspace: Path, timeout: float) -> list[Check]:
    checks = check_python() + check_packages()
    parts = session_parts(workspace, timeout)
    try:
        if not any(c.status == "fail" and c.name == "anthropic" for c in checks):
            checks += check_endpoint(parts.runtime, timeout)
        checks += check_settings(parts)
        checks += check_sandbox(parts.runtime.services.sandbox) + check_trust(parts)
        checks += check_tools() + check_workspace_checks(parts)
        checks += check_web(parts) + check_prompt_files(parts)
        checks += check_plugins(workspace.resolve())
        checks += check_editors() + check_index(workspace.resolve())
        checks += check_mcp(parts)
        checks += check_agents(parts)
        return checks + check_language_servers(parts)
    finally:
        parts.runtime.services.sandbox.close()
        parts.runtime.workspace.close()


def doctor(workspace: Path, *, as_json: bool = False, timeout: float = 15.0) -> int:
    checks = run_checks(workspace, timeout)
    failed = [c for c in checks if c.status == "fail" and c.essential]
    if as_json:
        payload = {"ok": not failed, "checks": [asdict(c) for c in checks]}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return 1 if failed else 0
    from rich.markup import escape
    from rich.table import Table

    from agentls.headless.ui import make_console

    console = make_console(sys.stdout)
    marks = {
        "ok": "[green]✓[/green]",
        "warn": "[yellow]![/yellow]",
        "fail": "[red]✗[/red]",
        "info": "[blue]·[/blue]",
    }
    table = Table(show_header=False, show_edge=False, box=None, pad_edge=False)
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column()
    for check in checks:
        table.add_row(marks[check.status], f"{check.group}: {check.name}", escape(check.detail))
    console.print(table)
    if failed:
        console.print(f"\n[red]{len(failed)} essential check(s) failed.[/red]")
        return 1
    console.print("\n[green]agentls is ready.[/green]")
    return 0
