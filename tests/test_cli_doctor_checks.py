"""`agentls doctor` explains what lint and run_tests would use in the workspace, and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.checks_support import copy_fixture
from tests.cli_support import cli_env, run_cli


def test_doctor_lists_detected_and_configured_checks_with_reasons(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    copy_fixture("ts", workspace)  # never `npm ci`-ed: its tools are missing
    copy_fixture("go", workspace)
    (workspace / ".agentls.toml").write_text(
        "[[lint]]\nname = 'sqlcheck'\ncommand = ['sqlcheck-not-installed', '{paths}']\n"
        "languages = ['sql']\ninstall = 'pip install sqlcheck'\n"
        "[[lint]]\ncommand = ['x']\nformat = 'bogus'\n"
    )
    env = cli_env(None, tmp_path)
    untrusted = _checks(workspace, env)
    # a session holds the project's own commands back until the workspace is trusted, and
    # the doctor reports from the same runtime: the entry is not offered, the trust line
    # says why
    assert "lint:sqlcheck" not in untrusted
    assert untrusted["trust:workspace trust"]["status"] == "warn"
    assert "lint" in untrusted["trust:workspace trust"]["detail"]
    assert "bogus" in untrusted["lint:settings"]["detail"]
    assert run_cli("trust", "-w", str(workspace), env=env).code == 0
    checks = _checks(workspace, env)
    eslint = checks["lint:eslint (ts)"]
    assert eslint["status"] == "warn"
    assert "npm ci (package-lock.json)" in eslint["detail"]
    assert "eslint.config.mjs" in eslint["detail"]
    vet = checks["lint:go vet (go)"]
    assert vet["status"] == "ok"
    assert "go/go.mod" in vet["detail"]
    assert "vet -json ./..." in vet["detail"]
    assert checks["tests:vitest (ts)"]["status"] == "warn"
    assert checks["tests:go test (go)"]["status"] == "ok"
    configured = checks["lint:sqlcheck"]
    assert configured["status"] == "warn"
    assert "pip install sqlcheck" in configured["detail"]
    assert "`lint` setting" in configured["detail"]
    assert "bogus" in checks["lint:settings"]["detail"]


def _checks(workspace: Path, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    result = run_cli("doctor", "--json", "-w", str(workspace), env=env)
    return {f"{c['group']}:{c['name']}": c for c in json.loads(result.stdout)["checks"]}
