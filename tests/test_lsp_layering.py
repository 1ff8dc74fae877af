"""The layers of `server/agentls`, checked statically and at run time.

The core (`agent/`, `tools/`, `workspace/`, `index/`, `config/`) is editor-agnostic: it never
imports the LSP libraries or a host, not even lazily inside a function or under
`TYPE_CHECKING`, so every host (LSP, CLI, ACP) gets the same agent. The static check reads
every import statement of every module (`ast`), which a run-time probe cannot: a lazy import
in a rarely taken branch would slip past it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ast_support import parse_module

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "agentls"

CORE = ("agent", "tools", "workspace", "index", "config", "runtime")
"""Subpackages that make up the editor-agnostic core (`runtime` builds every host's sessions)."""

BANNED_IN_CORE = ("pygls", "lsprotocol", "agentls.lsp", "agentls.headless", "agentls.host")
BANNED_IN_CORE += ("agentls.acp", "acp")  # the ACP host and its SDK
"""What the core may never import: the LSP libraries and the hosts built on the core."""


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every absolute import in a file, lazy ones included."""
    for node in ast.walk(parse_module(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:  # `from agentls import lsp` imports agentls.lsp
                yield node.lineno, f"{node.module}.{alias.name}"


def _banned(module: str) -> str | None:
    for banned in BANNED_IN_CORE:
        if module == banned or module.startswith(banned + "."):
            return banned
    return None


def _core_files() -> list[Path]:
    return sorted(f for sub in CORE for f in (PACKAGE / sub).rglob("*.py"))


def test_every_core_package_exists() -> None:
    assert [sub for sub in CORE if not (PACKAGE / sub / "__init__.py").is_file()] == []


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_core_never_imports_the_lsp_libraries_or_a_host(path: Path) -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{line} imports {module}"
        for line, module in _imports(path)
        if _banned(module)
    ]
    assert found == []


def test_the_static_check_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from lsprotocol import types\n"
        "def f():\n"
        "    import pygls.server\n"
        "    from agentls import host\n",
        encoding="utf-8",
    )
    banned = sorted({b for _, m in _imports(sample) if (b := _banned(m))})
    assert banned == ["agentls.host", "lsprotocol", "pygls"]


PROBE = """
import sys
import {module}
loaded = sorted({{m.split('.')[0] for m in sys.modules}} & {{{names}}})
print(','.join(loaded))
"""


def _loaded(module: str, *names: str) -> list[str]:
    code = PROBE.format(module=module, names=", ".join(repr(n) for n in names))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [name for name in out.stdout.strip().split(",") if name]


def test_the_host_does_not_import_the_lsp_libraries() -> None:
    assert _loaded("agentls.host", "pygls", "lsprotocol") == []


def test_building_the_server_imports_neither_the_model_sdk_nor_pydantic() -> None:
    probe = "agentls.cli, agentls.lsp.server as s; s.create_server()"
    assert _loaded(probe, "anthropic", "pydantic", "tree_sitter") == []


def _subpackage(module: str) -> str | None:
    """`agentls.agent.run.loop` → `agent`; top-level modules (`agentls.cli`) count as their own."""
    parts = module.split(".")
    if parts[0] != "agentls" or len(parts) < 2:
        return None
    return parts[1]


def _is_node(name: str) -> bool:
    """A subpackage or a top-level module (`trust_gate.py`, `host.py`, `cli.py`)."""
    return (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()


def _import_graph() -> dict[str, set[str]]:
    """Subpackage → the subpackages its modules import (lazy imports included)."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        if "demo" in relative.parts[1:2] and "sample" in relative.parts:
            continue
        me = _subpackage(".".join(relative.parts).removesuffix(".__init__"))
        if me is None:
            continue
        for _, module in _imports(path):
            target = _subpackage(module)
            if target is not None and target != me and _is_node(target):
                graph.setdefault(me, set()).add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph (as a path), or [] when it has none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_subpackages_import_each_other_without_cycles() -> None:
    assert _cycle(_import_graph()) == []


def test_top_level_modules_are_nodes_of_the_graph() -> None:
    graph = _import_graph()
    assert "cli" in graph  # top-level modules import and are imported
    assert "host" in graph["lsp"]
    assert "errors" in graph["host"]


def _modules() -> dict[str, Path]:
    """Every module by dotted name (`agentls.agent.run.loop`; a package by its own name)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        found[".".join(relative.parts).removesuffix(".__init__")] = path
    return found


def _module_graph() -> dict[str, set[str]]:
    """Module → the modules of its own package it imports (lazy and `TYPE_CHECKING`
    imports included; a package's `__init__` is left out, as it only re-exports)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        if path.name == "__init__.py":
            continue
        package = name.rpartition(".")[0]
        for _, imported in _imports(path):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]  # `from a.b import C` → `a.b`
            inside = imported and imported.rpartition(".")[0] == package
            if inside and imported != name and modules[imported].name != "__init__.py":
                graph.setdefault(name, set()).add(imported)
    return graph


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """The graph's cycles, as groups of modules that all reach each other (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_modules_inside_a_package_import_each_other_without_cycles() -> None:
    """The hosts included: their handlers name the connection's state
    (`agentls.lsp.connection`) or a small Protocol of what they use, never the module that
    registers them (`agentls.lsp.server`, `agentls.acp.workspace`)."""
    assert [sorted(group) for group in _strongly_connected(_module_graph())] == []


def _packages() -> list[str]:
    """Every package by dotted name: `agentls`, `agentls.agent`, `agentls.agent.run`, …"""
    return sorted(
        ".".join(init.parent.relative_to(PACKAGE.parent).parts)
        for init in PACKAGE.rglob("__init__.py")
    )


def _child(package: str, module: str) -> str | None:
    """The child of `package` (a subpackage or a module) that `module` is or lies in."""
    if not module.startswith(package + "."):
        return None
    name = module[len(package) + 1 :].split(".")[0]
    folder = PACKAGE.parent.joinpath(*package.split("."))
    is_child = (folder / name / "__init__.py").is_file() or (folder / f"{name}.py").is_file()
    return f"{package}.{name}" if is_child else None


def _children_graph(package: str) -> dict[str, set[str]]:
    """The children of `package` → the children they import. A subpackage is one node, made
    of every module under it (lazy and `TYPE_CHECKING` imports included); the package's own
    `__init__` is left out, as it only re-exports."""
    folder = PACKAGE.parent.joinpath(*package.split("."))
    graph: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        if path == folder / "__init__.py" or (
            "demo" in relative.parts and "sample" in relative.parts
        ):
            continue
        me = _child(package, ".".join(relative.parts).removesuffix(".__init__"))
        if me is None:
            continue
        for _, module in _imports(path):
            target = _child(package, module)
            if target is not None and target != me:
                graph.setdefault(me, set()).add(target)
    return graph


def test_the_children_of_every_package_import_each_other_without_cycles() -> None:
    """At every level — `agentls`'s subpackages and top-level modules, `agent/`'s subpackages
    (`run/`, `hooks/`, …) and its modules, the modules of each subpackage (the hosts'
    `lsp/` and `acp/` too) — there is no cycle."""
    found = {
        package: sorted(group)
        for package in _packages()
        for group in _strongly_connected(_children_graph(package))
    }
    assert found == {}


def test_the_children_check_sees_the_subpackages_of_agent() -> None:
    graph = _children_graph("agentls.agent")
    parts = ("protocol", "rules", "claude", "framework", "permissions", "hooks", "persistence")
    assert {f"agentls.agent.{p}" for p in (*parts, "run")} <= set(graph) | {
        target for targets in graph.values() for target in targets
    }
    run, framework = "agentls.agent.run", "agentls.agent.framework"
    assert framework in graph[run]  # the loop runs tools
    assert f"{run}.loop" in _children_graph(run)  # modules inside a subpackage are nodes too
    assert "agentls.agent.settings" in graph[run]  # so are an agent/ module and its importers
    assert _children_graph("agentls")["agentls.lsp"] >= {"agentls.host", "agentls.agent"}


def test_the_module_cycle_check_sees_type_checking_and_lazy_imports() -> None:
    groups = _strongly_connected({"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": set()})
    assert groups == [{"p.a", "p.b", "p.c"}]
    graph = _module_graph()
    assert (
        "agentls.agent.framework.context" in graph["agentls.agent.framework.tool"]
    )  # a module-level import
    assert "agentls.agent.run.subagent_run" in graph["agentls.agent.run.loop"]  # a lazy import


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_the_module_cycle_check_sees_the_hosts_handlers() -> None:
    """The hosts' handlers and what registers them are in the graph: a handler naming
    `agentls.lsp.server` (or `AcpWorkspace`) again would be reported as a cycle."""
    graph = _module_graph()
    server, sync = "agentls.lsp.server", "agentls.lsp.sync"
    assert sync in graph[server]  # `create_server` imports the handlers (lazily)
    assert "agentls.lsp.contract" in graph[sync]  # which name what they use of a connection
    assert "agentls.acp.delivery" in graph["agentls.acp.workspace"]
    graph[sync] = graph[sync] | {server}
    graph["agentls.acp.delivery"] = graph.get("agentls.acp.delivery", set()) | {
        "agentls.acp.workspace"
    }
    cycles = _strongly_connected(graph)
    assert any({server, sync} <= group for group in cycles)
    assert {"agentls.acp.delivery", "agentls.acp.workspace"} in cycles


CONNECTION_OWNERS = ("connection.py", "server.py", "serve.py")
"""The LSP modules that may know the concrete `AgentLanguageServer`: its definition, the
assembly that builds it and registers the features, and the transport that runs it."""


def _lsp_handler_modules() -> list[Path]:
    return sorted(p for p in (PACKAGE / "lsp").glob("*.py") if p.name not in CONNECTION_OWNERS)


@pytest.mark.parametrize("path", _lsp_handler_modules(), ids=lambda p: p.name)
def test_lsp_handlers_name_the_connection_protocol_not_the_server_class(path: Path) -> None:
    """Thin handlers (issue 26): each LSP feature module depends on
    `agentls.lsp.contract.Connection` (what it uses of a connection: the runtime, the host,
    the client's requests), never on the pygls server class in `agentls.lsp.connection`,
    not even lazily or under `TYPE_CHECKING`."""
    found = [
        f"{path.name}:{line}: {module}"
        for line, module in _imports(path)
        if module == "agentls.lsp.connection" or module.startswith("agentls.lsp.connection.")
    ]
    assert found == []


def test_the_handler_check_covers_the_feature_modules() -> None:
    names = {p.name for p in _lsp_handler_modules()}
    assert {"actions.py", "sync.py", "symbols.py", "delivery.py", "lifecycle.py"} <= names
    assert "contract.py" in names  # the Protocol itself imports no concrete class either
    assert not names & set(CONNECTION_OWNERS)
