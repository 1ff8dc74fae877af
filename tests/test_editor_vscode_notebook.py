"""VS Code (code-server) end to end with a notebook: the agent's notebook_edit reaches the
open notebook editor as a cell edit, and the notebook VS Code saves is valid.

`editor-clients/vscode/e2e/notebook.mjs` opens `sales.ipynb` in VS Code's notebook editor
(headless Chromium, Playwright), runs "agentls: Run Task…" against the scripted model
(`e2e/notebook-scenario.json`) and saves; then one undo (Ctrl+Z in the notebook editor) must
take the agent's whole edit back, the cleared outputs included. Fails, naming the install
script, when the extension's npm dependencies, code-server or chromium are missing.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from tests.vscode_support import run_driver


def test_code_server_applies_a_notebook_edit_as_cell_edits(tmp_path: Path) -> None:
    result = run_driver("notebook.mjs", "--screenshot", str(tmp_path / "notebook.png"))
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
