"""No duplicate server (issue 31, lifecycle), in a real editor: headless Neovim with the
agentls plugin and basedpyright attached as the user's Python server. The plugin answers
`agentls/editorQuery` "agentls/languages" with the filetypes its other servers serve, so
agentls starts no headless basedpyright of its own for Python, not even when the editor's
answer is empty (where agentls used to fall back to its own server); for C, which Neovim
has no server for, agentls starts its own clangd.

Needs `nvim` (scripts/editor-deps.sh), basedpyright (scripts/deps/codeintel.sh) and clangd.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.codeintel_support import NVIM, PYTHON_SHOP, run_neovim_script

SCRIPT = Path(__file__).resolve().parent / "codeintel" / "nvim_no_duplicate.lua"

pytestmark = [
    pytest.mark.skipif(NVIM is None, reason="nvim not installed (run scripts/editor-deps.sh)"),
    pytest.mark.skipif(shutil.which("clangd") is None, reason="clangd not installed"),
]

FILES = {
    **PYTHON_SHOP,
    "shop/dynamic.py": """
        def poke(x):
            return x.frobnicate()
        """,
    "native.c": """
        int add(int a, int b) { return a + b; }
        int main(void) { return add(1, 2); }
        """,
}


def run_neovim(tmp_path: Path) -> dict[str, Any]:
    return run_neovim_script(tmp_path, FILES, SCRIPT)


def _headless(processes: list[dict[str, Any]], nvim_pid: int, name: str) -> list[str]:
    """Programs named `name…` below `agentls serve` (agentls's own; Neovim's are not)."""
    children: dict[int, list[dict[str, Any]]] = {}
    for p in processes:
        children.setdefault(int(p["ppid"]), []).append(p)
    roots = [
        p for p in children.get(nvim_pid, []) if "agentls" in p["args"] and "serve" in p["args"]
    ]
    assert len(roots) == 1, processes
    found: list[str] = []
    queue = [int(roots[0]["pid"])]
    while queue:
        for child in children.get(queue.pop(), []):
            queue.append(int(child["pid"]))
            if any(Path(word).name.startswith(name) for word in child["args"].split()):
                found.append(str(child["args"]))
    return found


def test_no_headless_basedpyright_while_neovim_serves_python(tmp_path: Path) -> None:
    data = run_neovim(tmp_path)
    nvim_pid = int(data["nvim_pid"])
    assert data["languages"] == {"result": ["python"], "source": "Neovim"}
    assert "(source: editor (basedpyright))" in data["references"]["content"]
    definition = data["definition"]["content"]
    assert "the editor runs one for python (no duplicate server)" in definition, definition
    assert _headless(data["after_python"], nvim_pid, "basedpyright") == []
    # the user's own basedpyright runs, as Neovim's child
    assert any("basedpyright" in p["args"] for p in data["after_python"])
    # C: no editor server, so agentls's own clangd answers
    c_refs = data["c_references"]
    assert not c_refs.get("is_error"), c_refs
    assert "clangd" in c_refs["content"], c_refs["content"]
    assert _headless(data["after_c"], nvim_pid, "clangd") != []
    assert _headless(data["after_c"], nvim_pid, "basedpyright") == []
