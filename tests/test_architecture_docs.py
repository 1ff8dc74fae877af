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


def _agent_subpackages() -> dict[str, list[str]]:
    """`agent/`'s subpackages → their modules."""
    agent = PACKAGE / "agent"
    return {
        sub.name: sorted(p.stem for p in sub.glob("*.py") if p.stem != "__init__")
        for sub in sorted(agent.iterdir())
        if (sub / "__init__.py").is_file()
    }


def _inside_agent() -> str:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = text.index("## Inside `agent/`")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_the_docs_name_every_subpackage_of_agent() -> None:
    readme = _how_it_works()
    assert [name for name in _agent_subpackages() if f"`{name}/`" not in readme] == []
    inside = _inside_agent()
    assert [name for name in _agent_subpackages() if f"`agent/{name}/`" not in inside] == []


def test_the_architecture_table_places_every_module_of_agent() -> None:
    """Each module is listed in its own subpackage's row, so the table stays the map."""
    rows = {
        line.split("`agent/")[1].split("/`")[0]: line
        for line in _inside_agent().splitlines()
        if line.startswith("| `agent/")
    }
    missing = [
        f"{sub}/{module}"
        for sub, modules in _agent_subpackages().items()
        for module in modules
        if f"`{module}`" not in rows.get(sub, "")
    ]
    assert missing == []
    top = sorted(p.stem for p in (PACKAGE / "agent").glob("*.py") if p.stem != "__init__")
    assert [m for m in top if f"`{m}`" not in _inside_agent()] == []


def test_the_readme_names_every_top_level_module() -> None:
    section = _how_it_works()
    modules = sorted(p.name for p in PACKAGE.glob("*.py") if not p.stem.startswith("__"))
    assert [name for name in modules if f"`{name}`" not in section] == []


def test_the_module_paths_the_architecture_names_exist() -> None:
    import re

    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"(?<![\w/])((?:agent|runtime|workspace|lsp|acp)/[\w/]+\.py)", text))
    assert named, "the pattern finds the paths"
    assert sorted(path for path in named if not (PACKAGE / path).is_file()) == []
