"""What a sandboxed run can still read: the interpreter's environment wherever it lives (a
checkout and its venv under /tmp, as CI clones it), and the dependency folders the shadow
links to (also in nested projects), while the rest of the user's tree stays hidden."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.sandbox.layout import build_layout
from agentls.tools.run_command import RunCommand, RunCommandConfig, RunCommandInput
from agentls.workspace import Workspace
from agentls.workspace.shadow import ShadowRegistry
from tests.sandbox_support import sandboxed
from tests.shadow_support import make_ctx


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[ShadowRegistry]:
    shadows = ShadowRegistry(base_dir=tmp_path / "shadows")
    yield shadows
    shadows.close()


def test_an_environment_under_a_private_folder_is_shown_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = tmp_path / "checkout" / ".venv"  # pytest's tmp_path lies under /tmp
    (venv / "bin").mkdir(parents=True)
    monkeypatch.setattr(sys, "prefix", str(venv))
    layout = build_layout(
        roots=[tmp_path / "ws"],
        writable=[],
        home=tmp_path / "home",
        cwd=tmp_path,
        caches={},
        secrets=None,
    )
    assert venv.resolve() in layout.reexposed
    assert (tmp_path / "ws").resolve() not in layout.reexposed


async def test_linked_dependencies_of_a_nested_project_are_readable(
    tmp_path: Path, registry: ShadowRegistry
) -> None:
    root = tmp_path / "ws"
    package = root / "packages" / "web"
    (package / "node_modules" / "leftpad").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "web"}))
    (package / "node_modules" / "leftpad" / "index.js").write_text("module.exports = 'pad';\n")
    (root / "private.txt").write_text("the user's own file\n")
    services = sandboxed(Workspace([root]))
    tool = RunCommand(RunCommandConfig(kill_grace=0.3), shadows=registry)
    command = (
        f"cat packages/web/node_modules/leftpad/index.js; cat {root / 'private.txt'} || echo HIDDEN"
    )
    output = await tool.call(RunCommandInput(command=command), make_ctx(services))
    text = str(output.content)
    assert "module.exports = 'pad'" in text, text
    assert "HIDDEN" in text
    assert "the user's own file" not in text
