"""Source 1 in a real VS Code: code-server's built-in TypeScript features answer the agent's
`find_references` through the extension's `agentls/editorQuery` handler
(`vscode.executeReferenceProvider`), and the tool result names the editor.

Runs `editor-clients/vscode/e2e/code-intel.mjs` (code-server + Playwright + Debian's
chromium). Skips, naming what is missing, when the editor set-up is not installed
(`bash scripts/editor-deps.sh vscode`), like tests/test_editor_vscode.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXT = ROOT / "editor-clients" / "vscode"
EDITORS_DIR = Path(
    os.environ.get("AGENTLS_EDITORS_DIR") or Path.home() / ".cache" / "agentls-editors"
)
CODE_SERVER = Path(
    os.environ.get("CODE_SERVER")
    or EDITORS_DIR / "code-server-4.100.3" / "node_modules" / ".bin" / "code-server"
)
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
NPM = shutil.which("npm")
HINT = "run `bash scripts/editor-deps.sh vscode`"


def _missing() -> str | None:
    if NPM is None or shutil.which("node") is None:
        return "node/npm not installed"
    if not (EXT / "node_modules" / "vscode-languageclient").is_dir():
        return f"the extension's npm dependencies are not installed ({HINT})"
    if not CODE_SERVER.exists():
        return f"code-server not installed at {CODE_SERVER} ({HINT})"
    if not Path(CHROMIUM).exists():
        return f"chromium not installed ({HINT})"
    return None


@pytest.mark.skipif(_missing() is not None, reason=str(_missing()))
def test_code_server_answers_find_references_through_the_extension() -> None:
    assert NPM is not None
    package = subprocess.run(
        [NPM, "run", "--silent", "package"], cwd=EXT, capture_output=True, text=True, timeout=180
    )
    assert package.returncode == 0, package.stdout + package.stderr
    node = shutil.which("node")
    assert node is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    runner = str(EXT / "e2e" / "code-intel.mjs")
    argv = [node, runner, "--python", sys.executable, "--code-server", str(CODE_SERVER)]
    proc = subprocess.run(
        [*argv, "--chromium", CHROMIUM],
        cwd=EXT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result (exit {proc.returncode}): {proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(lines[-1])
    assert result.get("ok"), json.dumps(result, indent=1)[-6000:]
    tool_result = result["toolResult"]
    assert tool_result["is_error"] is False
    content = tool_result["content"]
    assert "(source: editor (code-server: typescript))" in content
    assert "src/a.ts" in content
    assert "src/b.ts" in content
    assert 'export const b = hello("b");' in content  # through the alias import
