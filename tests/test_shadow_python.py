"""Python-specific traps of running in the shadow: import precedence and stale bytecode."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.process import run_process
from agentls.workspace.shadow import ShadowWorkspace
from tests.shadow_support import stage


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (root / "lib").mkdir()
    (root / "lib" / "helper.py").write_text("NAME = 'disk'\n")
    return root


async def _python(shadow: ShadowWorkspace, code: str) -> str:
    result = await run_process(
        [sys.executable, "-c", code], cwd=shadow.shadow_root(), env=shadow.python_env()
    )
    assert result.exit_code == 0, result.stderr
    return result.stdout.strip()


async def test_same_size_edits_in_the_same_second_never_run_stale_bytecode(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    changes = ChangeSet()
    shadow = ShadowWorkspace(Workspace([project]), base_dir=tmp_path / "shadows")
    module = project / "src" / "pkg" / "__init__.py"
    copy = shadow.to_shadow(module)
    for value in ("2", "3"):
        stage(changes, module, f"VALUE = {value}\n")
        await shadow.sync(changes)
        os.utime(copy, (1_700_000_000, 1_700_000_000))  # pin: bytecode checks whole seconds
        assert await _python(shadow, "import pkg; print(pkg.VALUE)") == value
    assert any(shadow.pycache_dir.rglob("__init__*.pyc"))  # bytecode was cached (and dropped)
    shadow.close()


async def test_pythonpath_puts_the_shadow_first_and_redirects_workspace_entries(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server was started with the user's `lib/` on PYTHONPATH: runs must get the copy.
    monkeypatch.setenv("PYTHONPATH", f"{project / 'lib'}{os.pathsep}/opt/elsewhere")
    ws, changes = Workspace([project]), ChangeSet()
    stage(changes, project / "lib" / "helper.py", "NAME = 'staged'\n")
    shadow = ShadowWorkspace(ws, base_dir=tmp_path / "shadows")
    await shadow.sync(changes)
    root = shadow.shadow_root()
    entries = shadow.python_env()["PYTHONPATH"].split(os.pathsep)
    assert entries == [str(root / "src"), str(root), str(root / "lib"), "/opt/elsewhere"]
    out = await _python(shadow, "import pkg, helper; print(pkg.__file__); print(helper.NAME)")
    pkg_file, name = out.splitlines()
    assert Path(pkg_file).is_relative_to(root)
    assert name == "staged"
    shadow.close()


async def test_bytecode_cache_inside_the_workspace_is_never_used(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    shadow = ShadowWorkspace(
        Workspace([project]), base_dir=tmp_path / "shadows", pycache_dir=project / ".cache"
    )
    await shadow.sync()
    env = shadow.python_env()
    assert "PYTHONPYCACHEPREFIX" not in env
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    shadow.close()
