"""The sandboxed runner, exercised with real child processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from agentls.workspace.process import (
    ProcessCancelled,
    ProcessStartError,
    group_alive,
    run_process,
    scrub_env,
)
from tests.shadow_support import process_gone, read_when_there

PY = sys.executable

# A child that starts a grandchild in its own group (same session), reports both pids,
# then hangs. Killing only the child would leave the grandchild running.
SPAWNER = """
import subprocess, sys, time, pathlib
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
pathlib.Path(sys.argv[1]).write_text(str(grandchild.pid))
print("started", flush=True)
time.sleep(60)
"""


async def _wait_for_file(path: Path, limit: float = 10.0) -> str:
    for _ in range(int(limit / 0.02)):
        if text := read_when_there(path):
            return text
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


async def test_collects_exit_code_and_both_streams(tmp_path: Path) -> None:
    code = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"
    result = await run_process([PY, "-c", code], cwd=tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.timed_out
    assert not result.ok
    assert result.duration > 0


async def test_runs_in_cwd_without_a_shell(tmp_path: Path) -> None:
    result = await run_process(
        [PY, "-c", "import os; print(os.getcwd())", "$HOME; ls"], cwd=tmp_path
    )
    assert Path(result.stdout.strip()) == tmp_path


async def test_secrets_never_reach_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-1")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-2")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws")
    monkeypatch.setenv("NPM_TOKEN", "npm")
    monkeypatch.setenv("PLAIN_SETTING", "kept")
    code = "import json, os; print(json.dumps(dict(os.environ)))"
    result = await run_process(
        [PY, "-c", code],
        cwd=tmp_path,
        env={"ANTHROPIC_API_KEY": "explicit", "EXTRA": "x"},
        allow_env={"NPM_TOKEN", "ANTHROPIC_AUTH_TOKEN"},
    )
    seen = json.loads(result.stdout)
    for secret in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "GITHUB_TOKEN"):
        assert secret not in seen
    assert "AWS_SECRET_ACCESS_KEY" not in seen
    assert seen["NPM_TOKEN"] == "npm"  # explicitly allowed
    assert seen["PLAIN_SETTING"] == "kept"
    assert seen["EXTRA"] == "x"


def test_scrub_env_is_a_pure_filter() -> None:
    env = {"PATH": "/bin", "MY_SECRET": "s", "DB_PASSWORD": "p", "api_key_x": "k"}
    assert scrub_env(env) == {"PATH": "/bin"}


async def test_output_keeps_head_and_tail_and_says_what_was_dropped(tmp_path: Path) -> None:
    code = "print('HEAD'); print('x' * 100_000); print('TAIL')"
    result = await run_process([PY, "-c", code], cwd=tmp_path, max_output_bytes=1000)
    assert result.stdout.startswith("HEAD")
    assert result.stdout.rstrip().endswith("TAIL")
    assert result.stdout_dropped == 100_011 - 1000
    assert f"[... {result.stdout_dropped} bytes of output dropped ...]" in result.stdout
    assert len(result.stdout) < 1200


async def test_timeout_kills_the_whole_group_and_keeps_partial_output(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild"
    result = await run_process(
        [PY, "-c", SPAWNER, str(pid_file)], cwd=tmp_path, timeout=1.0, kill_grace=0.5
    )
    assert result.timed_out
    assert result.exit_code == -signal.SIGTERM
    assert "started" in result.stdout
    assert not group_alive(result.pid)
    assert process_gone(int(read_when_there(pid_file)))
    assert result.duration < 5


async def test_cancellation_kills_the_whole_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild"
    task = asyncio.create_task(run_process([PY, "-c", SPAWNER, str(pid_file)], cwd=tmp_path))
    grandchild = int(await _wait_for_file(pid_file))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(ProcessCancelled) as caught:
        await task
    assert task.cancelled()
    assert "started" in caught.value.partial.stdout
    assert not group_alive(caught.value.partial.pid)
    assert process_gone(grandchild)


async def test_a_child_ignoring_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(60)"
    )
    result = await run_process([PY, "-c", code], cwd=tmp_path, timeout=0.5, kill_grace=0.3)
    assert result.timed_out
    assert result.exit_code == -signal.SIGKILL
    assert result.stdout == "ready\n"


async def test_polite_signal_first_lets_the_process_report(tmp_path: Path) -> None:
    code = (
        "import time\nprint('ready', flush=True)\n"
        "try:\n    time.sleep(60)\n"
        "except KeyboardInterrupt:\n    print('interrupted, cleaning up')\n"
    )
    result = await run_process(
        [PY, "-c", code], cwd=tmp_path, timeout=0.5, stop_signals=(signal.SIGINT, signal.SIGTERM)
    )
    assert result.timed_out
    assert result.exit_code == 0
    assert "interrupted, cleaning up" in result.stdout


async def test_leftover_background_processes_die_with_the_run(tmp_path: Path) -> None:
    pid_file = tmp_path / "daemon"
    code = (
        "import subprocess, sys, pathlib\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"pathlib.Path({str(pid_file)!r}).write_text(str(p.pid))\n"
    )
    result = await run_process([PY, "-c", code], cwd=tmp_path)
    assert result.exit_code == 0
    assert process_gone(int(read_when_there(pid_file)))


async def test_missing_program_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ProcessStartError, match="no-such-linter-xyz"):
        await run_process(["no-such-linter-xyz", "--version"], cwd=tmp_path)


def test_group_alive_sees_a_live_group() -> None:
    assert group_alive(os.getpgid(0))


async def test_stdin_is_passed_and_closed(tmp_path: Path) -> None:
    result = await run_process(
        [sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"],
        cwd=tmp_path,
        stdin=b"hello hook",
    )
    assert result.exit_code == 0
    assert result.stdout.strip() == "HELLO HOOK"


async def test_without_stdin_the_child_reads_eof(tmp_path: Path) -> None:
    result = await run_process(
        [sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"], cwd=tmp_path
    )
    assert result.stdout.strip() == "''"
