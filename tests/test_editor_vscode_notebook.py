"""VS Code (code-server) end to end with a notebook: the agent's notebook_edit reaches the
open notebook editor as a cell edit, and the notebook VS Code saves is valid.

`editor-clients/vscode/e2e/notebook.mjs` opens `sales.ipynb` in VS Code's notebook editor
(headless Chromium, Playwright), runs "agentls: Run Task…" against the scripted model
(`e2e/notebook-scenario.json`) and saves; then one undo (Ctrl+Z in the notebook editor) must
take the agent's whole edit back, the cleared outputs included. Fails, naming the install
script, when the extension's npm dependencies, code-server or chromium are missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.test_editor_vscode import (
    CHROMIUM,
    CODE_SERVER,
    EXT,
    INSTALL_HINT,
    _missing_extension_deps,
    _npm,
)


def test_code_server_applies_a_notebook_edit_as_cell_edits(tmp_path: Path) -> None:
    missing = _missing_extension_deps()
    if missing is not None:
        pytest.fail(missing)
    if not CODE_SERVER.exists():
        pytest.fail(f"code-server is not installed at {CODE_SERVER}: {INSTALL_HINT}")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"chromium is not installed: {INSTALL_HINT}")
    package = _npm("run", "--silent", "package")
    assert package.returncode == 0, package.stdout + package.stderr
    node = shutil.which("node")
    assert node is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run(
        [
            node,
            str(EXT / "e2e" / "notebook.mjs"),
            "--python",
            sys.executable,
            "--code-server",
            str(CODE_SERVER),
            "--chromium",
            CHROMIUM,
            "--screenshot",
            str(tmp_path / "notebook.png"),
        ],
        cwd=EXT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result (exit {proc.returncode}): {proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(lines[-1])
    assert result.get("ok"), json.dumps(result, indent=1)[-6000:]
    assert "1 / 0" in result["cellsBefore"]
    # the agent read the editor's cells (VS Code's cell URIs), not empty ones
    assert 'cell_id="boom"' in result["readFile"]
    assert "1 / 0" in result["readFile"]
    assert "math.fsum(values)" in result["readFile"]
    assert result["cellsAfter"][-1] == "total = 1 / 2"  # the cell itself, in the editor
    notebook = nbformat.reads(result["saved"], as_version=4)
    nbformat.validate(notebook)
    boom = next(c for c in notebook.cells if c.get("id") == "boom")
    assert (boom.source, boom.outputs) == ("total = 1 / 2", [])  # outputs cleared
    assert notebook.cells[1].outputs  # the other cells keep theirs
    assert (tmp_path / "notebook.png").stat().st_size > 10_000
    # the editor cleared the cell's outputs too, and one undo restores source and outputs
    assert result["errorOutputAfterEdit"] is False
    assert result["undos"] == 1, result["steps"]
    assert result["cellsUndone"] == result["cellsBefore"]
