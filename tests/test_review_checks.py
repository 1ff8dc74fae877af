"""A checked changeset before review (issue 30, `checks.beforeReview`): when a run ends
with staged edits, each staged file is checked (real basedpyright, started headless by
`agentls serve`) and the result is shown per file in the CLI's table and `--json`."""

from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, run_cli, write_tree
from tests.codeintel_support import basedpyright_langserver

FILES = {
    "a.py": "def double(n: int) -> int:\n    return n * 2\n",
    "b.py": "from a import double\nvalue = double(2)\n",
    "c.py": "from a import double\nother = double(3)\n",
}


def test_a_run_ends_with_each_staged_file_checked(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    basedpyright_langserver()
    root = write_tree(tmp_path / "ws", FILES)
    (root / ".agentls.toml").write_text(
        "[checks]\nafterEditSeconds = 60\nbeforeReviewSeconds = 60\n"
    )
    env = cli_env(api.base_url, tmp_path / "state")
    edit_b = ("edit_file", {"path": "b.py", "old_string": "double(2)", "new_string": 'double("2")'})
    edit_c = ("edit_file", {"path": "c.py", "old_string": "double(3)", "new_string": "double(4)"})
    api.extend(tool_turn(edit_b, edit_c), text_turn("done"))
    result = run_cli("run", "change b and c", "-w", str(root), "--json", env=env, timeout=300)
    assert result.code == 0, result.stderr
    checks = {Path(c["path"]).name: c for c in json.loads(result.stdout)["checks"]}
    assert checks["b.py"]["summary"].startswith("1 new error: b.py:2 error: Argument of type")
    assert checks["b.py"]["new_errors"] == 1
    assert checks["c.py"]["summary"] == "0 new errors"

    api.extend(tool_turn(edit_b), text_turn("done"))
    shown = run_cli("run", "change b", "-w", str(root), env=env, timeout=300)
    assert shown.code == 0, shown.stderr
    assert "Checks before review" in shown.stdout
    assert "1 new error: b.py:2" in shown.stdout


TESTED = {
    "calc.py": "def double(n: int) -> int:\n    return n * 2\n",
    "tests/test_calc.py": (
        "from calc import double\n\n\n"
        "def test_two():\n    assert double(2) == 4\n\n\n"
        "def test_zero():\n    assert double(0) == 0\n"
    ),
}
EDIT_CALC = ("edit_file", {"path": "calc.py", "old_string": "n * 2", "new_string": "n + n or 1"})


def _tested_workspace(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "ws", TESTED)
    (root / ".agentls.toml").write_text(
        "[checks]\nafterEditSeconds = 60\nbeforeReviewSeconds = 60\ntestsSeconds = 120\n"
    )
    return root


def test_before_review_the_tests_for_the_changed_file_run_in_the_shadow(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    basedpyright_langserver()
    root = _tested_workspace(tmp_path)
    env = cli_env(api.base_url, tmp_path / "state")
    api.extend(tool_turn(EDIT_CALC), text_turn("done"))
    result = run_cli("run", "change calc", "-w", str(root), "--json", env=env, timeout=300)
    assert result.code == 0, result.stderr
    (check,) = json.loads(result.stdout)["checks"]
    assert check["summary"].startswith("tests 1/2 ✗ ("), check
    assert "test_zero" in check["summary"], check
    assert check["summary"].endswith(" · 0 new errors"), check
    assert check["tests"]["which"] == "the tests for the changed files"
    assert check["tests"]["targets"] == ["tests/test_calc.py"]
    assert "ruff" in check["source"], check  # linted too
    assert (root / "calc.py").read_text() == TESTED["calc.py"]  # checked in the shadow


def test_before_review_the_tests_the_agent_ran_run_again(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = _tested_workspace(tmp_path)
    env = cli_env(api.base_url, tmp_path / "state")
    ran = ("run_tests", {"target": "tests/test_calc.py::test_two"})
    api.extend(tool_turn(ran), tool_turn(EDIT_CALC), text_turn("done"))
    result = run_cli("run", "change calc", "-w", str(root), "--json", env=env, timeout=300)
    assert result.code == 0, result.stderr
    (check,) = json.loads(result.stdout)["checks"]
    assert check["summary"] == "tests 1/1 ✓ · 0 new errors", check
    assert check["tests"]["which"] == "the tests the agent ran"
    api.extend(tool_turn(EDIT_CALC), text_turn("done"))
    table = run_cli("run", "again", "-w", str(root), env=env, timeout=300)
    assert "tests 1/2 ✗" in table.stdout, table.stdout


def test_auto_mode_with_block_new_errors_keeps_the_failing_file_staged(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    basedpyright_langserver()
    root = write_tree(tmp_path / "ws", FILES)
    (root / ".agentls.toml").write_text(
        '[checks]\nafterEditSeconds = 60\nbeforeReviewSeconds = 60\nblock = "newErrors"\n'
    )
    env = cli_env(api.base_url, tmp_path / "state")
    edit_b = ("edit_file", {"path": "b.py", "old_string": "double(2)", "new_string": 'double("2")'})
    edit_c = ("edit_file", {"path": "c.py", "old_string": "double(3)", "new_string": "double(4)"})
    api.extend(tool_turn(edit_b, edit_c), text_turn("done"))
    result = run_cli(
        *("run", "change b and c", "-w", str(root), "--mode", "auto", "--allow", "edit_file"),
        *("--apply", "--json"),
        env=env,
        timeout=300,
    )
    assert result.code == 0, result.stderr
    assert (root / "c.py").read_text() == "from a import double\nother = double(4)\n", result.stdout
    assert (root / "b.py").read_text() == FILES["b.py"]  # held: never written
    payload = json.loads(result.stdout)
    held = {Path(e["uri"]).name: e["reason"] for e in payload["edit"]["left_out"]}
    assert held["b.py"].startswith("kept staged: 1 new error"), held
    assert "b.py:2 error: Argument of type" in held["b.py"]
    checks = {Path(c["path"]).name: c for c in payload["checks"]}
    assert checks["b.py"]["held"] is True
    told = api.requests[1].json["messages"][-1]["content"]
    assert "Kept staged, not written (checks.block: newErrors)" in json.dumps(told)


def _processes_with(token: str) -> list[str]:
    """The command lines of the live processes that mention `token` (this test's own
    unique marker), so a test run the checks left behind shows up."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # gone meanwhile
        if token in cmdline and state != "Z":
            found.append(f"{proc.name}: {cmdline}")
    return found


def test_before_review_tests_that_outlast_the_limit_are_stopped_and_the_review_happens(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """`checks.testsSeconds = 10` and a test that waits on a child that sleeps 600 s:
    the check says the tests did not finish in time, the run still ends with its edit
    staged for review (nothing written, nothing lost), and no test process outlives it."""
    token = f"slowtest{uuid.uuid4().hex[:12]}"
    child = f"import time; time.sleep(600)  # {token}"
    slow = (
        "import subprocess, sys\n\n\n"
        "def test_slow():\n"
        f"    subprocess.run([sys.executable, '-c', {child!r}])\n"
    )
    root = write_tree(tmp_path / "ws", {**TESTED, "tests/test_calc.py": slow})
    (root / ".agentls.toml").write_text(
        '[checks]\nafterEdit = "off"\nbeforeReviewSeconds = 60\ntestsSeconds = 10\n'
    )
    env = cli_env(api.base_url, tmp_path / "state")
    api.extend(tool_turn(EDIT_CALC), text_turn("done"))
    started = time.monotonic()
    seen: list[str] = []
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(
            run_cli, "run", "change calc", "-w", str(root), "--json", env=env, timeout=300
        )
        while not running.done():
            seen = seen or _processes_with(token)
            time.sleep(0.05)
        result = running.result()
    took = time.monotonic() - started
    assert seen, "the slow test never started"
    assert result.code == 0, result.stderr
    payload = json.loads(result.stdout)
    (check,) = payload["checks"]
    assert check["tests"]["status"] == "timeout", check
    assert check["summary"].startswith("tests: not done in time"), check
    assert check["tests"]["targets"] == ["tests/test_calc.py"], check
    assert payload["status"] == "completed", payload
    assert took < 120, took  # the 600 s test did not hold the run
    # nothing the test started is left running (pytest, nor its child)
    deadline = time.monotonic() + 10
    while _processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_with(token) == []
    # the review happens on the staged edit: not written, and nothing lost (apply writes it)
    assert (root / "calc.py").read_text() == TESTED["calc.py"]
    applied = run_cli("apply", str(payload["session"]), env=env)
    assert applied.code == 0, applied.stdout + applied.stderr
    assert "n + n or 1" in (root / "calc.py").read_text()
