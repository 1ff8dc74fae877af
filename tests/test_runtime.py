"""`AgentRuntime` in process: the parts it builds from settings, workspace and ports.

The protocol-level comparison of the hosts is `tests/test_host_parity.py`; here the
runtime alone, with the default ports (nobody to ask) and with a host's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.registry import ToolPool
from agentls.langservers import LanguageServerPool
from agentls.runtime.config_state import ConfigState, load_project_config
from agentls.runtime.ports import HostPorts
from agentls.runtime.runtime import AgentRuntime
from agentls.workspace import Workspace

AGENT = "---\nname: reviewer\ndescription: Reviews a change.\n---\nReview it.\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    root = tmp_path / "ws"
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "reviewer.md").write_text(AGENT, encoding="utf-8")
    found = Workspace([root])
    yield found
    found.close()


def _runtime(
    workspace: Workspace, settings: object, ports: HostPorts | None = None
) -> AgentRuntime:
    config = ConfigState()
    config.set_project(load_project_config(workspace.roots[0]))
    config.set_editor(settings, "test")
    runtime = AgentRuntime(config, workspace, ports)
    assert runtime.reload_safety() == []
    return runtime


def test_every_built_in_gets_its_settings(workspace: Workspace) -> None:
    settings = {"webSearch": {"enabled": "always", "maxUses": 2}, "webFetch": {"maxChars": 2000}}
    runtime = _runtime(workspace, settings)
    tools = {tool.name: tool for tool in runtime.tools(runtime.services)}
    assert "reviewer: Reviews a change." in tools["task"].description()  # the project's agent
    [search] = [t for t in _offered(runtime, workspace) if t["name"] == "web_search"]
    assert search["max_uses"] == 2


def test_web_search_follows_the_endpoint(workspace: Workspace) -> None:
    other = _runtime(workspace, {"baseUrl": "http://127.0.0.1:9"})
    assert "web_search" not in [t["name"] for t in _offered(other, workspace)]
    anthropic = _runtime(workspace, {})
    assert "web_search" in [t["name"] for t in _offered(anthropic, workspace)]


def _offered(runtime: AgentRuntime, workspace: Workspace) -> list[Any]:
    return list(ToolPool.assemble(runtime.tools(runtime.services)).api_tools())


def test_the_hosts_code_sources_come_before_the_language_servers(workspace: Workspace) -> None:
    marker = object()
    ports = HostPorts(editor_code_sources=lambda ws: [marker])  # type: ignore[list-item]
    sources = _runtime(workspace, {}, ports).code_sources(workspace)
    assert sources[0] is marker
    assert isinstance(sources[1], LanguageServerPool)


def test_the_language_servers_follow_the_runtimes_sandbox_settings(workspace: Workspace) -> None:
    """agentls's own language servers are confined by the workspace's `sandbox` settings,
    as the runtime loaded them (one sandbox object for the tools and the servers)."""
    from agentls.langservers.sandboxed import confine

    runtime = _runtime(workspace, {"sandbox": {"enabled": False}})
    [pool] = [s for s in runtime.code_sources(workspace) if isinstance(s, LanguageServerPool)]
    assert pool.sandbox is runtime.services.sandbox
    off = confine(workspace, ["pylsp"], pool.sandbox.settings)
    assert not off.sandboxed
    assert "switched off" in off.why_not


def test_nobody_to_ask_means_ask_fails_closed(workspace: Workspace) -> None:
    policy = _runtime(workspace, {}).permissions()
    assert policy.approver is None  # type: ignore[attr-defined]
