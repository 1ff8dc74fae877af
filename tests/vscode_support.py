"""The code-server end-to-end drivers (`editor-clients/vscode/e2e/*.mjs`), run from the tests.

Where the VS Code set-up lives (the extension's npm dependencies, code-server, Debian's
chromium, all installed by `bash scripts/editor-deps.sh vscode`) and one `run_driver` that
packages the .vsix, runs a driver against them and returns the JSON line it prints, so the
VS Code tests differ only in the driver they run and what they assert.
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


def missing_extension_deps() -> str | None:
    """What keeps the extension's own lint/tests/packaging from running, or None."""
    if NPM is None or shutil.which("node") is None:
        return "node/npm not installed"
    if not (EXT / "node_modules" / "vscode-languageclient").is_dir():
        return f"the extension's npm dependencies are not installed ({INSTALL_HINT})"
    return None


def missing_code_server() -> str | None:
    """What keeps a code-server end to end from running (extension deps, code-server,
    chromium), or None."""
    missing = missing_extension_deps()
    if missing is not None:
        return missing
    if not CODE_SERVER.exists():
        return f"code-server is not installed at {CODE_SERVER}: {INSTALL_HINT}"
    if not Path(CHROMIUM).exists():
        return f"chromium is not installed: {INSTALL_HINT}"
    return None


def npm(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """`npm ARGS` in the extension's folder."""
    assert NPM is not None
    return subprocess.run(
        [NPM, *args], cwd=EXT, capture_output=True, text=True, timeout=timeout, check=False
    )


def run_driver(driver: str, *args: str, timeout: float = 300) -> dict[str, Any]:
    """Packages the .vsix, runs `e2e/<driver>` (with --python/--code-server/--chromium and
    `args`) without the caller's ANTHROPIC_* variables, and returns its result line once it
    says ok; fails the test, naming the install script, when the set-up is missing, and
    with the driver's report when it is not ok."""
    missing = missing_code_server()
    if missing is not None:
        pytest.fail(missing)
    package = npm("run", "--silent", "package")
    assert package.returncode == 0, package.stdout + package.stderr
    node = shutil.which("node")
    assert node is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    argv = [node, str(EXT / "e2e" / driver), "--python", sys.executable]
    argv += ["--code-server", str(CODE_SERVER), "--chromium", CHROMIUM, *args]
    proc = subprocess.run(
        argv, cwd=EXT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result (exit {proc.returncode}): {proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(lines[-1])
    assert result.get("ok"), json.dumps(result, indent=1)[-8000:]
    return result
