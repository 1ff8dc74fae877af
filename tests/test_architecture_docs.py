"""The design documents name the code as it is: every package of `server/agentls` is in
the README's "How it works" and in docs/architecture.md, and the runtime's modules that
the docs point to exist."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "server" / "agentls"


def _packages() -> list[str]:
    return sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())


def _how_it_works() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("## How it works")
    return text[start : text.index("\n## ", start + 1)]


def test_the_readme_names_every_package() -> None:
    section = _how_it_works()
    assert [name for name in _packages() if f"`{name}/`" not in section] == []


def test_the_architecture_names_every_package() -> None:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert [name for name in _packages() if f"{name}/" not in text] == []


def test_the_ports_the_docs_name_exist() -> None:
    from agentls.acp.workspace import AcpWorkspace
    from agentls.lsp.safety import lsp_ports
    from agentls.runtime.ports import HostPorts
    from agentls.runtime.runtime import AgentRuntime

    assert callable(lsp_ports)
    assert hasattr(AcpWorkspace, "_ports")
    assert {"approver", "prompts", "editor_code_sources"} <= set(HostPorts.__dataclass_fields__)
    assert all(hasattr(AgentRuntime, name) for name in ("tools", "permissions", "hooks"))
