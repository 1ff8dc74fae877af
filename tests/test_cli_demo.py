"""`agentls demo` runs green offline: the recorded session fixes the sample project."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_support import cli_env, run_cli


def test_demo_fixes_the_sample_project_offline(tmp_path: Path) -> None:
    # no key, no endpoint: the demo brings its own scripted model
    env = cli_env(None, tmp_path / "state")
    target = tmp_path / "demo"
    result = run_cli("demo", "--dir", str(target), env=env)
    assert result.code == 0, result.stdout + result.stderr
    out = result.stdout
    assert "fixes two bugs" in out
    assert "run PROMPT -w" in out  # kept (--dir): how to go on with it
    assert "→ Running tests: tests/test_cart.py" in out
    assert "→ Reading shop/cart.py" in out
    assert "→ Editing shop/pricing.py" in out
    assert "→ Editing shop/cart.py" in out
    assert "→ Linting" in out
    assert "agent's test run 1: failed (3 failed)" in out
    assert "agent's test run 3: passed (3 passed)" in out
    assert "pytest on the changed project: 3 passed" in out
    assert "Files changed (written)" in out
    assert "+        return sum(item.price * item.quantity for item in self.items)" in out
    cart = (target / "shop" / "shop" / "cart.py").read_text()
    assert "item.price * item.quantity" in cart


def test_demo_json(tmp_path: Path) -> None:
    result = run_cli("demo", "--json", env=cli_env(None, tmp_path / "state"))
    assert result.code == 0, result.stdout + result.stderr
    payload = json.loads(result.stdout)
    assert payload["status"] == "completed"
    assert payload["tests_passed"] is True
    assert payload["edit"]["applied"] is True
    assert [r["status"] for r in payload["agent_tests"]] == ["failed", "failed", "passed"]
