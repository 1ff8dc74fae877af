"""VS Code: the extension's lint and unit tests, its .vsix, and the code-server end to end.

`editor-clients/vscode/e2e/run.mjs` installs the .vsix into a headless code-server, drives
it with Playwright (Debian's chromium), runs "agentls: Run Task…" against the scripted
model, accepts the refactor preview, checks the live view and "agentls: Show Status", and
cancels a second run by clicking the status-bar item. Skips, naming what is missing, when
the extension's npm dependencies, code-server or chromium are not installed
(`scripts/editor-deps.sh vscode` installs all three).
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
INSTALL_HINT = "run `bash scripts/editor-deps.sh vscode`"


def _missing_extension_deps() -> str | None:
    if NPM is None or shutil.which("node") is None:
        return "node/npm not installed"
    if not (EXT / "node_modules" / "vscode-languageclient").is_dir():
        return f"the extension's npm dependencies are not installed ({INSTALL_HINT})"
    return None


def _npm(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    assert NPM is not None
    return subprocess.run(
        [NPM, *args], cwd=EXT, capture_output=True, text=True, timeout=timeout, check=False
    )


needs_extension_deps = pytest.mark.skipif(
    _missing_extension_deps() is not None, reason=str(_missing_extension_deps())
)


@needs_extension_deps
def test_extension_lint_and_unit_tests() -> None:
    lint = _npm("run", "--silent", "lint")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    unit = _npm("test")
    assert unit.returncode == 0, unit.stdout[-4000:] + unit.stderr[-2000:]
    assert "# fail 0" in unit.stdout


@needs_extension_deps
@pytest.mark.skipif(
    not CODE_SERVER.exists(), reason=f"code-server not installed at {CODE_SERVER} ({INSTALL_HINT})"
)
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"chromium not installed ({INSTALL_HINT})")
def test_code_server_run_task_and_accept_refactor_preview(tmp_path: Path) -> None:
    package = _npm("run", "--silent", "package")
    assert package.returncode == 0, package.stdout + package.stderr
    node = shutil.which("node")
    assert node is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run(
        [
            node,
            str(EXT / "e2e" / "run.mjs"),
            "--python",
            sys.executable,
            "--code-server",
            str(CODE_SERVER),
            "--chromium",
            CHROMIUM,
            "--screenshot",
            str(tmp_path / "e2e.png"),
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
    assert result.get("ok"), json.dumps(result, indent=1)[-8000:]
    assert result["editorText"][0] == "def welcome(name):"
    assert "agentls.server.command" in result["startError"]  # a clear error when it can't start
    assert result["uncheckedAtStart"] >= 1  # the preview really needed the user's tick
    assert "→ Editing hello.py" in result["liveView"]  # output channel fed by agentls/event
    assert result["status"].startswith("agentls — 1 session(s)")
    assert "== cancelled" in result["cancelView"]  # status-bar click cancelled run 2
    assert (tmp_path / "e2e.png").stat().st_size > 10_000
