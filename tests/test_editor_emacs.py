"""Emacs: `editor-clients/emacs/agentls.el` with the installed eglot, in `emacs -batch`.

It byte-compiles with warnings as errors, registers its commands, and runs end to end:
eglot starts `agentls serve`, `agentls-run` against the scripted model, `agentls-accept`,
buffer text checked (editor-clients/emacs/test/e2e.el); an accept right after typing
with eglot's didChange held back, and a conflict reported with its reason. Fails, naming
the install script, when `emacs` or a loadable `eglot` is missing (Emacs 29+ has it built
in; on Debian 12's Emacs 28: `scripts/editor-deps.sh emacs` installs emacs-nox and
elpa-eglot).
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

from agentls.testing import ScriptedMessagesServer
from agentls.testing.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "editor-clients" / "emacs" / "agentls.el"
E2E = ROOT / "editor-clients" / "emacs" / "test" / "e2e.el"
EMACS = shutil.which("emacs")


def _has_eglot() -> bool:
    if EMACS is None:
        return False
    probe = subprocess.run(
        [EMACS, "-batch", "--eval", "(require 'eglot)"], capture_output=True, timeout=60
    )
    return probe.returncode == 0


@pytest.fixture(autouse=True)
def _emacs_with_eglot() -> None:
    if not _has_eglot():
        pytest.fail(
            "emacs with eglot is not installed: run `bash scripts/editor-deps.sh emacs` "
            "(Debian's emacs-nox and elpa-eglot)"
        )


def test_agentls_el_byte_compiles_without_warnings(tmp_path: Path) -> None:
    assert EMACS is not None
    copy = tmp_path / "agentls.el"
    shutil.copy(SOURCE, copy)
    proc = subprocess.run(
        [
            EMACS,
            "-batch",
            "-L",
            str(tmp_path),
            "--eval",
            "(setq byte-compile-error-on-warn t)",
            "-f",
            "batch-byte-compile",
            str(copy),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "agentls.elc").exists()


def test_agentls_el_loads_and_registers_with_eglot(tmp_path: Path) -> None:
    assert EMACS is not None
    script = (
        "(progn (require 'agentls) (agentls-setup)"
        " (unless (assoc '(python-mode python-ts-mode) eglot-server-programs)"
        '   (error "agentls not in eglot-server-programs"))'
        " (dolist (cmd '(agentls-run agentls-ask agentls-fix agentls-cancel agentls-accept"
        "                agentls-reject agentls-transcript agentls-status))"
        '   (unless (commandp cmd) (error "%s is not a command" cmd)))'
        ' (princ "ok"))'
    )
    proc = subprocess.run(
        [EMACS, "-batch", "-L", str(SOURCE.parent), "--eval", script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("ok")


def _e2e(tmp_path: Path, scenario: Path, case: str = "edit") -> dict[str, Any]:
    assert EMACS is not None
    workspace = tmp_path / "workspace"
    shutil.copytree(ROOT / "editor-clients" / "neovim" / "test" / "fixture", workspace)
    result_file = tmp_path / "result.json"
    agentls = str(Path(sys.executable).with_name("agentls"))
    with ScriptedMessagesServer(Scenario.from_file(scenario)) as model:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")},
            "ANTHROPIC_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": "test",
            "AGENTLS_E2E_CASE": case,
            "AGENTLS_E2E_WORKSPACE": str(workspace),
            "AGENTLS_E2E_RESULT": str(result_file),
            "AGENTLS_E2E_CMD": json.dumps(
                [agentls, "serve", "--log-file", str(tmp_path / "server.log")]
            ),
            "HOME": str(tmp_path / "home"),  # no user init, no eglot state from the real home
        }
        proc = subprocess.run(
            [EMACS, "-batch", "-L", str(SOURCE.parent), "-l", str(E2E)],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
            cwd=workspace,
        )
    assert result_file.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(result_file.read_text())
    assert result["ok"] is True, json.dumps(result, indent=1) + proc.stderr[-3000:]
    result["disk"] = (workspace / "hello.py").read_text()
    return result


def test_eglot_run_then_accept_changes_the_buffer(tmp_path: Path) -> None:
    scenario = ROOT / "editor-clients" / "neovim" / "test" / "scenario-edit.json"
    result = _e2e(tmp_path, scenario)
    assert "-> Editing hello.py" in result["log"]
    assert result["disk"].startswith("def welcome(name):")  # saved by the accept itself
    assert "agentls: 1 file(s) staged for review" in result["log"]
    assert "M-x agentls-accept" in result["log"]
    assert "agentls.accept" not in result["log"]
    assert "agentls: applied 1 file(s)" in result["log"]


def test_accept_right_after_typing_and_a_conflict_are_reported_truly(tmp_path: Path) -> None:
    """Bug 2: eglot held the typing back, the edit was refused for its version, and the
    client still said "accepted"; and the server gave up before eglot's late didChange."""
    result = _e2e(
        tmp_path, ROOT / "editor-clients" / "emacs" / "test" / "scenario-typing.json", "typing"
    )
    assert result["staged_message"].startswith("agentls: 1 file(s) staged for review")
    assert result["accept_message"].startswith("agentls: applied 1 file(s)"), result
    buffer = result["buffer"].splitlines()
    assert buffer[0] == "def welcome(name):"  # the agent's rename, applied…
    assert "# typed just before accepting" in buffer  # …onto the user's newer text
    assert result["unsaved_after_accept"] is True  # the user's unsaved typing: not saved
    conflict = result["conflict_message"]
    assert conflict.startswith("agentls: nothing was applied"), conflict
    assert "changes overlap" in conflict
    assert "M-x agentls-diff" in conflict
    assert "applied 1 file" not in conflict
    assert "accepted" not in conflict
    assert buffer[1] == '    return "Hey, " + name'  # the user's line is kept
    assert '+    return "Hi, " + name' in result["diff"]  # agentls-diff: the agent's version
    assert {"[Show diff]", "[Accept staged]", "[Reject]"} <= set(result["buttons"])


def test_agentls_diff_accepts_and_rejects_the_hunk_at_point(tmp_path: Path) -> None:
    """Issue 30: in *agentls-diff*, R rejects the hunk at point (with a reason), A accepts."""
    scenario = ROOT / "editor-clients" / "neovim" / "test" / "scenario-hunks.json"
    result = _e2e(tmp_path, scenario, "hunks")
    assert "--- hunk 1: hello.py (line 1)" in result["hunks"]
    assert "--- hunk 2: hello.py (line 5)" in result["hunks"]
    assert '+print(welcome("world"))' in result["hunks"]
    assert "--- hunk 2:" not in result["after_reject"]
    assert result["disk"] == (
        'def welcome(name):\n    return "Hello, " + name\n\n\nprint(greet("world"))\n'
    )
    # the file's check before review, under its header in the diff
    assert "=== hello.py (modify)\nchecks: 0 new errors\n" in result["hunks"], result["hunks"]
    # M-x agentls-rewind offers the session's turns with their prompts and files
    assert result["hunks"].endswith("=== turns shown\n1. Rename greet — hello.py")
