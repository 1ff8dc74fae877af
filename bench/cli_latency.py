"""`agentls tool read_file` on a 2-file project, end to end, vs a Python subprocess running
`bash -c true` — interleaved in one run (issue 33: target ≤ 0.3 s end to end).

Both paths in the same run, interleaved: the direct one (a fresh `agentls serve` per call)
and `--reuse` (a tool server kept running for the workspace; its first call, which starts
it, is reported on its own). The reused path's CPU adds the tool server's and its language
server's CPU during the call (read from /proc) to the CLI's; `-X importtime` of a reused
call shows whether the CLI process imported pygls, lsprotocol or pydantic.

Also the first tool call after `initialize` against later ones on the same server (target:
≤ 50 ms more), through a bare LSP client over the server's pipes (what the CLI does).

Wall time is reported with the CPU time of the whole command (the CLI and the server it
starts: `RUSAGE_CHILDREN`), the steadier figure on a busy machine. Every figure taken above
a 1-minute load of 1.5 is marked not comparable.

    python bench/cli_latency.py [--runs 10]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from conditions import Conditions


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def make_project(folder: Path) -> Path:
    root = folder / "project"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n", encoding="utf-8")
    (root / "b.py").write_text("import a\n\nprint(a.a())\n", encoding="utf-8")
    return root


def env_for(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    env["XDG_CACHE_HOME"] = str(folder / "cache")
    env["XDG_CONFIG_HOME"] = str(folder / "config")
    env["XDG_STATE_HOME"] = str(folder / "state")
    env["AGENTLS_TRANSCRIPT_DIR"] = str(folder / "transcripts")
    return env


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall, cpu) seconds of one command, output checked."""
    cpu = cpu_of_children()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command[:4]} failed: {done.stderr.decode()[-800:]}")
    return wall, cpu_of_children() - cpu


def start_server(cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A fresh `agentls serve --stdio` in `cwd`, driven over pipes (stderr dropped)."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentls", "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
    )


class RawClient:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin: IO[bytes] | None = self.proc.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def request(self, method: str, params: Any = None) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            length = 0
            while (line := stdout.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not length:
                raise SystemExit("the server closed its output")
            message = json.loads(stdout.read(length))
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
            elif message.get("id") == self.next_id:
                return message.get("result")


def server_cpu(runtime: Path) -> float:
    """CPU seconds so far of the tool servers started from `runtime` (and their language
    servers), from their pid files."""
    total = 0.0
    for pidfile in (runtime / "agentls").glob("*.pid"):
        with contextlib.suppress(OSError, ValueError):
            pids = json.loads(pidfile.read_text())
            for pid in (pids.get("pid"), pids.get("server")):
                if pid:
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                    total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def stop_servers(runtime: Path) -> None:
    for pidfile in (runtime / "agentls").glob("*.pid"):
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(json.loads(pidfile.read_text())["pid"]), signal.SIGTERM)
    for _ in range(100):
        if not list((runtime / "agentls").glob("*.pid")):
            return
        time.sleep(0.1)


def reused_imports(command: list[str], env: dict[str, str]) -> str:
    """What a reused call's CLI process imports: the count, and any heavy library."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command[1:]], capture_output=True, env=env
    )
    names = [
        line.split("|")[-1].strip()
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    heavy = sorted({n.split(".")[0] for n in names} & {"pygls", "lsprotocol", "pydantic", "rich"})
    return f"{len(names) - 1} modules imported, heavy: {', '.join(heavy) or 'none'}"


def first_call(project: Path, env: dict[str, str], later: int = 5) -> tuple[float, float]:
    """(first call, median of the later calls) in seconds, on one fresh server."""
    proc = start_server(project, env)
    client = RawClient(proc)
    uri = project.resolve().as_uri()
    caps = {"experimental": {"agentls": {"indexOnDemand": True}}}  # as `agentls tool`
    client.request("initialize", {"processId": os.getpid(), "rootUri": uri, "capabilities": caps})
    client.send({"method": "initialized", "params": {}})
    tool = {"name": "read_file", "input": {"path": "a.py"}}
    call = {"command": "agentls.tool", "arguments": [tool]}
    times = []
    for _ in range(1 + later):
        start = time.perf_counter()
        client.request("workspace/executeCommand", call)
        times.append(time.perf_counter() - start)
    client.request("shutdown")
    client.send({"method": "exit"})
    proc.wait(30)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()
    return times[0], statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    cond = Conditions.start()
    with (
        tempfile.TemporaryDirectory(prefix="agentls-cli-bench-") as tmp,
        tempfile.TemporaryDirectory(prefix="agls-", dir="/tmp") as run_dir,
    ):
        folder, runtime = Path(tmp), Path(run_dir)
        project = make_project(folder)
        env = env_for(folder) | {"XDG_RUNTIME_DIR": run_dir, "AGENTLS_TOOL_SERVER_IDLE": "600"}
        tool = [sys.executable, "-m", "agentls", "tool", "read_file", '{"path": "a.py"}']
        tool += ["-w", str(project)]
        reuse = [*tool, "--reuse"]
        timed(tool, env)  # pip's and the OS's caches, once
        try:
            start_wall, start_cpu = timed(reuse, env)  # starts the tool server
            results = measure(cond, tool, reuse, env, runtime, args.runs)
            imports = reused_imports(reuse, env)
        finally:
            stop_servers(runtime)
        firsts = [first_call(project, env) for _ in range(3)]
    report(cond, results, (start_wall, start_cpu), imports, firsts)


Samples = dict[str, list[float]]


def measure(
    cond: Conditions,
    tool: list[str],
    reuse: list[str],
    env: dict[str, str],
    runtime: Path,
    runs: int,
) -> Samples:
    """Direct and reused calls (alternating which goes first) against `bash -c true`."""
    results: Samples = {k: [] for k in ("direct", "direct_cpu", "reuse", "reuse_cpu", "ref")}
    order = itertools.count()

    def reused() -> None:
        before = server_cpu(runtime)
        wall, cpu = timed(reuse, env)
        results["reuse"].append(wall)
        results["reuse_cpu"].append(cpu + server_cpu(runtime) - before)

    def direct() -> None:
        wall, cpu = timed(tool, env)
        results["direct"].append(wall)
        results["direct_cpu"].append(cpu)

    def both() -> None:
        for step in (direct, reused) if next(order) % 2 == 0 else (reused, direct):
            step()

    for _, (ref, _) in cond.interleave(both, lambda: timed(["bash", "-c", "true"]), runs):
        results["ref"].append(ref)
    return results


def report(
    cond: Conditions,
    results: Samples,
    start: tuple[float, float],
    imports: str,
    firsts: list[tuple[float, float]],
) -> None:
    mark = cond.mark()
    ref_med = statistics.median(results["ref"])
    print(cond.report())
    for name, label in (("direct", "direct"), ("reuse", "--reuse (server running)")):
        med = statistics.median(results[name])
        cpu = statistics.median(results[name + "_cpu"])
        print(
            f"agentls tool read_file, {label}: median {med * 1000:.0f} ms wall (min "
            f"{min(results[name]) * 1000:.0f}), CPU {cpu * 1000:.0f} ms; "
            f"bash -c true: {ref_med * 1000:.1f} ms; ratio {med / ref_med:.0f}×; "
            f"target ≤ 300 ms{mark}"
        )
    ratio = statistics.median(results["direct"]) / statistics.median(results["reuse"])
    print(f"direct / reused: {ratio:.1f}× wall{mark}")
    print(
        f"--reuse, first call (starts the tool server): {start[0] * 1000:.0f} ms wall, "
        f"CLI CPU {start[1] * 1000:.0f} ms{mark}"
    )
    print(f"--reuse CLI process: {imports}")
    extra = [(first - later) * 1000 for first, later in firsts]
    print(
        f"first tool call after initialize: +{statistics.median(extra):.0f} ms over later "
        f"calls (runs: {', '.join(f'{e:.0f}' for e in extra)}; later calls "
        f"{statistics.median(f[1] for f in firsts) * 1000:.1f} ms); target ≤ 50 ms{mark}"
    )


if __name__ == "__main__":
    main()
