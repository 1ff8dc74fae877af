"""`agentls doctor` explains what lint and run_tests would use in the workspace, and why."""

from __future__ import annotations

import json
from pathlib import Path

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
    result = run_cli("doctor", "--json", "-w", str(workspace), env=cli_env(None, tmp_path))
    checks = {f"{c['group']}:{c['name']}": c for c in json.loads(result.stdout)["checks"]}
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
