"""`agentls tool read_file` on a 2-file project, end to end, vs a Python subprocess running
`bash -c true` — interleaved in one run (issue 33: target ≤ 0.3 s end to end).

Also the first tool call after `initialize` against later ones on the same server (target:
≤ 50 ms more), through a bare LSP client over the server's pipes (what the CLI does).

Wall time is reported with the CPU time of the whole command (the CLI and the server it
starts: `RUSAGE_CHILDREN`), the steadier figure on a busy machine. Every figure taken above
a 1-minute load of 1.5 is marked not comparable.

    python bench/cli_latency.py [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def first_call(project: Path, env: dict[str, str], later: int = 5) -> tuple[float, float]:
    """(first call, median of the later calls) in seconds, on one fresh server."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentls", "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=project,
        env=env,
    )
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
    with tempfile.TemporaryDirectory(prefix="agentls-cli-bench-") as tmp:
        folder = Path(tmp)
        project = make_project(folder)
        env = env_for(folder)
        tool = [sys.executable, "-m", "agentls", "tool", "read_file", '{"path": "a.py"}']
        tool += ["-w", str(project)]
        timed(tool, env)  # pip's and the OS's caches, once
        a_wall, a_cpu, b_wall = [], [], []
        for (wall, cpu), (ref, _) in cond.interleave(
            lambda: timed(tool, env), lambda: timed(["bash", "-c", "true"]), args.runs
        ):
            a_wall.append(wall)
            a_cpu.append(cpu)
            b_wall.append(ref)
        firsts = [first_call(project, env) for _ in range(3)]
    mark = cond.mark()
    tool_med, ref_med = statistics.median(a_wall), statistics.median(b_wall)
    print(cond.report())
    print(
        f"agentls tool read_file: median {tool_med * 1000:.0f} ms wall (min "
        f"{min(a_wall) * 1000:.0f}), CPU {statistics.median(a_cpu) * 1000:.0f} ms; "
        f"bash -c true: {ref_med * 1000:.1f} ms; ratio {tool_med / ref_med:.0f}×; "
        f"target ≤ 300 ms{mark}"
    )
    extra = [(first - later) * 1000 for first, later in firsts]
    print(
        f"first tool call after initialize: +{statistics.median(extra):.0f} ms over later "
        f"calls (runs: {', '.join(f'{e:.0f}' for e in extra)}; later calls "
        f"{statistics.median(f[1] for f in firsts) * 1000:.1f} ms); target ≤ 50 ms{mark}"
    )


if __name__ == "__main__":
    main()
