"""A hostile repository against the language servers agentls starts (issue 27, item 1).

Each repository ships code a language server would load or run: a `tsserver.js` in
`node_modules/typescript` (or Yarn's sdks), a virtualenv interpreter. On load it writes a
file outside the workspace (and one inside). The agent's `hover`/`diagnostics` must not
run it before the workspace is trusted, and, once trusted, the sandbox keeps it from
touching anything outside (the workspace read-only, a private /tmp).

Real typescript-language-server and basedpyright; `agentls serve` over stdio.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.codeintel_support import (
    PYTHON_SHOP,
    TYPESCRIPT_APP,
    basedpyright_langserver,
    tool_input,
    typescript_bin,
    write_tree,
)
from tests.lsp_support import FakeEditor, command, editor_session, server_env
from tests.trust_support import trust_workspace

EVIL_JS = """
const fs = require("fs");
for (const target of %s) {
  try { fs.writeFileSync(target, "pwned by the repository's tsserver.js\\n"); } catch (e) {}
}
process.exit(1);
"""
EVIL_PYTHON = """#!/bin/sh
for target in %s; do echo "pwned by the repository's python" > "$target" 2>/dev/null; done
exec /usr/bin/python3 "$@"
"""


async def tool(editor: FakeEditor, name: str, input: dict[str, Any]) -> tuple[str, bool]:
    result = await command(editor, "agentls.tool", {"name": name, "input": input})
    return str(result["content"]), bool(result["is_error"])


def plant_tsserver(root: Path, folder: str, targets: list[Path]) -> None:
    """A fake TypeScript that typescript-language-server accepts (a package.json with a
    version next to `lib/tsserver.js`) and that writes `targets` when run."""
    package = root / folder
    (package / "lib").mkdir(parents=True)
    (package / "package.json").write_text('{"name": "typescript", "version": "5.9.3"}\n')
    js = EVIL_JS % json.dumps([str(t) for t in targets])
    (package / "lib" / "tsserver.js").write_text(js)


def ts_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    path = f"{typescript_bin()}{os.pathsep}{os.environ.get('PATH', '')}"
    return server_env(None, tmp_path / "transcripts", PATH=path, **extra)


NO_SANDBOX = {"sandbox": {"enabled": False}}


@pytest.mark.parametrize(
    "folder",
    ["node_modules/typescript", ".yarn/sdks/typescript", ".vscode/pnpify/typescript"],
)
async def test_an_untrusted_workspace_typescript_never_runs(tmp_path: Path, folder: str) -> None:
    """Without the sandbox, to show the first defence alone: the global tsserver is passed."""
    root = tmp_path / "repo"
    write_tree(root, TYPESCRIPT_APP)
    outside = tmp_path / "outside-pwned"
    plant_tsserver(root, folder, [outside, root / "inside-pwned"])
    env = ts_env(tmp_path)
    async with editor_session("neovim", root, env, initialization_options=NO_SANDBOX) as ed:
        content, is_error = await tool(ed, "hover", tool_input("src/a.ts", 3, "greet"))
        assert not is_error, content
        assert "greet(name: string): string" in content  # the real TypeScript answered
        content, is_error = await tool(ed, "diagnostics", {"paths": ["src/a.ts"]})
        assert not is_error, content
        status = await command(ed, "agentls.status", {})
    assert not outside.exists()
    assert not (root / "inside-pwned").exists()
    ts = next(e for e in status["code_intel"] if e.get("language") == "typescript")
    assert any("TypeScript:" in note for note in ts.get("restricted", [])), ts


async def test_the_workspace_typescript_asks_for_trust(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_tree(root, TYPESCRIPT_APP)
    plant_tsserver(root, "node_modules/typescript", [tmp_path / "pwned"])
    env = ts_env(tmp_path)
    async with editor_session("neovim", root, env) as ed:
        status = await command(ed, "agentls.status", {})
    held = json.dumps(status.get("trust", status))
    assert "node_modules/typescript/lib/tsserver.js" in held, held


async def test_a_trusted_workspace_typescript_runs_sandboxed(tmp_path: Path) -> None:
    """Trust widens what the server loads (the workspace's TypeScript), never what it
    touches: the repository's tsserver.js runs, but cannot write outside, nor in the
    workspace."""
    root = tmp_path / "repo"
    write_tree(root, TYPESCRIPT_APP)
    outside = tmp_path / "outside-pwned"
    marker_dir = tmp_path / "visible"
    marker_dir.mkdir()
    plant_tsserver(root, "node_modules/typescript", [outside, root / "inside-pwned"])
    env = ts_env(tmp_path)
    trust_workspace(root, env)
    async with editor_session("neovim", root, env) as ed:
        content, _ = await tool(ed, "hover", tool_input("src/a.ts", 3, "greet"))
        # The workspace's (fake) TypeScript was loaded, trust widened that: it answers nothing.
        assert "(source: language server (typescript-language-server))" not in content
        status = await command(ed, "agentls.status", {})
    ts = next(e for e in status["code_intel"] if e.get("language") == "typescript")
    assert ts.get("sandbox") == "bwrap (project read-only, network off)", ts
    assert not outside.exists()
    assert not (root / "inside-pwned").exists()


async def test_an_untrusted_virtualenv_interpreter_never_runs(tmp_path: Path) -> None:
    """pyright runs the interpreter on PATH to list import paths; the project's own
    virtualenv must not be that interpreter before trust."""
    basedpyright_langserver()
    root = tmp_path / "repo"
    write_tree(root, PYTHON_SHOP)
    outside = tmp_path / "outside-pwned"
    venv = root / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "pyrightconfig.json").write_text('{"venvPath": ".", "venv": ".venv"}\n')
    for name in ("python", "python3"):
        script = venv / "bin" / name
        script.write_text(EVIL_PYTHON % f"{outside} {root / 'inside-pwned'}")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session("neovim", root, env, initialization_options=NO_SANDBOX) as ed:
        content, is_error = await tool(ed, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert not is_error, content
        assert "def total(tax: float) -> float" in content
        content, is_error = await tool(ed, "diagnostics", {"paths": ["shop/checkout.py"]})
        assert not is_error, content
    assert not outside.exists()
    assert not (root / "inside-pwned").exists()


async def test_a_trusted_virtualenv_interpreter_runs_sandboxed(tmp_path: Path) -> None:
    basedpyright_langserver()
    root = tmp_path / "repo"
    write_tree(root, PYTHON_SHOP)
    outside = tmp_path / "outside-pwned"
    ran = tmp_path / "ran"
    venv = root / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for name in ("python", "python3"):
        script = venv / "bin" / name
        script.write_text(EVIL_PYTHON % f"{outside} {root / 'inside-pwned'}")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    env = server_env(None, tmp_path / "transcripts")
    trust_workspace(root, env)
    async with editor_session("neovim", root, env) as ed:
        content, is_error = await tool(ed, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert not is_error, content
        status = await command(ed, "agentls.status", {})
    python = next(e for e in status["code_intel"] if e.get("language") == "python")
    assert python.get("sandbox") == "bwrap (project read-only, network off)", python
    assert python["rss_mb"] > 10  # the whole tree in the sandbox: basedpyright's node
    assert not outside.exists()
    assert not ran.exists()
    assert not (root / "inside-pwned").exists()
