"""Sandbox overhead: `run_command` with and without the sandbox, in one run.

Through the real tool (shadow sync, permission-free `call`, the process runner), the same
workspace, interleaved so machine load hits both sides alike:

- `true`: the fixed cost per command (target: sandbox ≤ +30 ms);
- a 200-test pytest suite: the cost on real work (target: sandboxed ≤ 1.1× unsandboxed);
- cancel: how long until a cancelled `sleep` is gone, tree and all (target: ≤ 0.5 s).

"Without the sandbox" is the tool's own unsandboxed path (`sandbox.enabled: false`), which
runs under the small supervisor that makes trees die with the server (a Python start-up);
`bare` is a plain `bash -c true` spawned directly, for reference. The machine's load
average is printed: on a shared machine both sides slow down alike, the ratio holds.

    python bench/sandbox_overhead.py [--repeats 15] [--suite-repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.services import ToolServices
from agentls.sandbox import SandboxConfig, SandboxSettings, probe
from agentls.tools.run_command import RunCommand, RunCommandConfig, RunCommandInput
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.shadow import ShadowRegistry

SUITE_TESTS = 200


def make_project(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    lines = ["import json\n"]
    for index in range(SUITE_TESTS):
        lines.append(
            f"\ndef test_{index}(tmp_path):\n"
            f"    (tmp_path / 'x.json').write_text(json.dumps({{'n': {index}}}))\n"
            f"    assert json.loads((tmp_path / 'x.json').read_text())['n'] == {index}\n"
        )
    (root / "test_suite.py").write_text("".join(lines))


class Side:
    """One workspace + tool, with the sandbox on or off."""

    def __init__(self, root: Path, shadows: Path, sandboxed: bool) -> None:
        self.workspace = Workspace([root])
        settings = SandboxSettings(enabled=sandboxed)
        services = ToolServices(self.workspace)
        services.sandbox.config = SandboxConfig(settings)
        self.tool = RunCommand(RunCommandConfig(), shadows=ShadowRegistry(base_dir=shadows))
        self.ctx = ToolContext(
            session_id="bench", workspace=self.workspace, changes=ChangeSet(), services=services
        )

    async def run(self, command: str) -> float:
        started = time.perf_counter()
        output = await self.tool.call(RunCommandInput(command=command), self.ctx)
        took = time.perf_counter() - started
        if output.is_error:
            raise SystemExit(f"benchmark command failed: {output.content}")
        return took

    async def cancel_latency(self) -> float:
        task = asyncio.ensure_future(
            self.tool.call(RunCommandInput(command="sleep 300 & sleep 301"), self.ctx)
        )
        await asyncio.sleep(0.5)
        started = time.perf_counter()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return time.perf_counter() - started


async def bare(root: Path) -> float:
    """`bash -c true` spawned directly: no shadow sync, supervisor, sandbox or guard."""
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec("bash", "-c", "true", cwd=root)
    await proc.wait()
    return time.perf_counter() - started


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def main(repeats: int, suite_repeats: int) -> int:
    found = probe()
    if not found.ok:
        print(f"cannot measure: {found.describe()}")
        return 1
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        root = Path(tmp) / "proj"
        make_project(root)
        on = Side(root, Path(tmp) / "shadows-on", sandboxed=True)
        off = Side(root, Path(tmp) / "shadows-off", sandboxed=False)
        suite = f"{sys.executable} -m pytest -q -p no:cacheprovider test_suite.py"
        for side in (on, off):  # warm up: shadow copy, bytecode, page cache
            await side.run("true")
            await side.run(suite)
        times: dict[str, list[float]] = {"on": [], "off": [], "bare": []}
        for _ in range(repeats):
            times["on"].append(await on.run("true"))
            times["off"].append(await off.run("true"))
            times["bare"].append(await bare(root))
        suite_times: dict[str, list[float]] = {"on": [], "off": []}
        for _ in range(suite_repeats):
            suite_times["on"].append(await on.run(suite))
            suite_times["off"].append(await off.run(suite))
        cancels = {"on": [await on.cancel_latency() for _ in range(3)]}
        cancels["off"] = [await off.cancel_latency() for _ in range(3)]
    true_on, true_off = median_ms(times["on"]), median_ms(times["off"])
    suite_on, suite_off = median_ms(suite_times["on"]), median_ms(suite_times["off"])
    print(f"sandbox: {found.describe()}; load average {os.getloadavg()[0]:.1f}")
    print(
        f"run_command `true` (median of {repeats}): sandboxed {true_on:.1f} ms, "
        f"unsandboxed {true_off:.1f} ms, bare spawn {median_ms(times['bare']):.1f} ms"
    )
    delta = true_on - true_off
    print(f"  overhead per command: {delta:+.1f} ms (target ≤ +30 ms) {_verdict(delta <= 30)}")
    ratio = suite_on / suite_off
    print(
        f"run_command 200-test pytest suite (median of {suite_repeats}): sandboxed "
        f"{suite_on:.0f} ms, unsandboxed {suite_off:.0f} ms"
    )
    print(f"  ratio: {ratio:.3f}× (target ≤ 1.10×) {_verdict(ratio <= 1.10)}")
    worst = max(max(cancels["on"]), max(cancels["off"]))
    print(
        f"cancel of a running command (worst of 3): sandboxed {max(cancels['on']) * 1000:.0f} ms,"
        f" unsandboxed {max(cancels['off']) * 1000:.0f} ms (target ≤ 500 ms) "
        f"{_verdict(worst <= 0.5)}"
    )
    return 0


def _verdict(ok: bool) -> str:
    return "OK" if ok else "OVER TARGET"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--suite-repeats", type=int, default=5)
    options = parser.parse_args()
    raise SystemExit(asyncio.run(main(options.repeats, options.suite_repeats)))
