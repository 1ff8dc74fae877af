#!/usr/bin/env python3
"""Run the Neovim end-to-end cases in a real headless Neovim against the scripted model.

Usage: python editor-clients/neovim/test/run_e2e.py [edit] [cancel] [--nvim PATH] [--keep]

Per case: copy fixture/ to a temp dir, start `agentls.testing.scripted_server` with the
case's scenario, run `nvim --headless -u NONE` with the plugin on 'runtimepath' and
e2e.lua, and read the JSON result it writes. Prints one JSON line per case; exit status 0
only when every case passed. Run it with the Python that has agentls installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PLUGIN = HERE.parent
CASES = (
    *("unit", "edit", "ask", "cancel", "resource", "review", "stale", "enable", "plan"),
    *("venv", "hunks"),
)
CASE_TIMEOUT = 150


class ScriptedModel:
    """`python -m agentls.testing.scripted_server` on a free port, for one case."""

    def __init__(self, scenario: Path, record: Path) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentls.testing.scripted_server",
                "--scenario",
                str(scenario),
                "--record",
                str(record),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 20
        line = ""
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if line.startswith("listening on "):
                self.url = line.split("listening on ", 1)[1].strip()
                return
            if not line and self.proc.poll() is not None:
                break
        self.close()
        raise RuntimeError(f"scripted server did not start: {line!r}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def run_case(case: str, nvim: str, keep: bool) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix=f"agentls-nvim-{case}-"))
    workspace = tmp / "workspace"
    shutil.copytree(HERE / "fixture", workspace)
    result_path = tmp / "result.json"
    scenario = HERE / f"scenario-{case}.json"
    model = ScriptedModel(scenario, tmp / "requests.jsonl") if scenario.exists() else None
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": model.url if model else "http://127.0.0.1:9",
        "ANTHROPIC_API_KEY": "test",
        "AGENTLS_E2E_CASE": case,
        "AGENTLS_E2E_WORKSPACE": str(workspace),
        "AGENTLS_E2E_RESULT": str(result_path),
        "AGENTLS_E2E_CMD": json.dumps(
            [
                sys.executable,
                "-m",
                "agentls",
                "serve",
                "--log-file",
                str(tmp / "server.log"),
                "--log-level",
                os.environ.get("AGENTLS_E2E_LOG_LEVEL", "INFO"),
            ]
        ),
        "XDG_STATE_HOME": str(tmp / "state"),  # keep lsp.log out of the user's home
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "XDG_DATA_HOME": str(tmp / "data"),
    }
    if case == "venv":
        only_project_venv(workspace, env)
    argv = [
        nvim,
        "--headless",
        "-u",
        "NONE",
        "-i",
        "NONE",
        "-n",
        "--cmd",
        f"set rtp^={PLUGIN}",
        "-c",
        f"luafile {HERE / 'e2e.lua'}",
    ]
    started = time.monotonic()
    try:
        proc = subprocess.run(
            argv, env=env, cwd=workspace, capture_output=True, text=True, timeout=CASE_TIMEOUT
        )
        output = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        output = f"nvim timed out after {CASE_TIMEOUT}s: {exc.stdout!r} {exc.stderr!r}"
    finally:
        if model:
            model.close()
    elapsed = round(time.monotonic() - started, 2)
    if result_path.exists():
        result: dict[str, Any] = json.loads(result_path.read_text())
    else:
        result = {"ok": False, "error": f"no result file; nvim said: {output[-2000:]}"}
    result["seconds"] = elapsed
    result["prompts"] = first_prompts(tmp / "requests.jsonl")
    result["tools"] = first_tools(tmp / "requests.jsonl")
    result["tool_results"] = tool_results(tmp / "requests.jsonl")
    result["last_message"] = last_message(tmp / "requests.jsonl")
    result["tmp"] = str(tmp)
    if not result.get("ok"):
        log_file = tmp / "server.log"
        if log_file.exists():
            result["server_log_tail"] = log_file.read_text()[-3000:]
    if keep or not result.get("ok"):
        result["kept"] = True
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return result


def only_project_venv(workspace: Path, env: dict[str, str]) -> None:
    """The `venv` case: `agentls` only as the project's `.venv/bin/agentls` (a script that
    runs this Python's agentls), no `agentls` on PATH."""
    script = workspace / ".venv" / "bin" / "agentls"
    script.parent.mkdir(parents=True)
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agentls "$@"\n')
    script.chmod(0o755)
    path = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(d for d in path if d and not (Path(d) / "agentls").exists())


def first_prompts(record: Path) -> list[str]:
    """The first user message of each recorded model request (what the model was asked)."""
    prompts = []
    if record.exists():
        for line in record.read_text().splitlines():
            messages = json.loads(line).get("json", {}).get("messages", [])
            content = messages[0]["content"] if messages else ""
            if isinstance(content, list):
                content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
            prompts.append(content)
    return prompts


def last_message(record: Path) -> str:
    """The last message of the last recorded model request, as JSON text."""
    if not record.exists():
        return ""
    lines = record.read_text().splitlines()
    messages = json.loads(lines[-1]).get("json", {}).get("messages", []) if lines else []
    return json.dumps(messages[-1]) if messages else ""


def first_tools(record: Path) -> list[str]:
    """Tool names offered in the first recorded model request."""
    if not record.exists():
        return []
    for line in record.read_text().splitlines():
        return [t.get("name", "") for t in json.loads(line).get("json", {}).get("tools", [])]
    return []


def tool_results(record: Path) -> dict[str, str]:
    """The text the model got back for each tool name (its first call), from the recording."""
    names: dict[str, str] = {}
    results: dict[str, str] = {}
    if not record.exists():
        return results
    for line in record.read_text().splitlines():
        for message in json.loads(line).get("json", {}).get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_use":
                    names[block["id"]] = block["name"]
                elif block.get("type") == "tool_result" and block["tool_use_id"] in names:
                    text = block.get("content", "")
                    if isinstance(text, list):
                        text = "".join(b.get("text", "") for b in text if isinstance(b, dict))
                    results.setdefault(names[block["tool_use_id"]], text)
    return results


def emit(result: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", metavar="CASE", help=f"any of {', '.join(CASES)}")
    parser.add_argument("--nvim", default=shutil.which("nvim") or "nvim")
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs")
    args = parser.parse_args()
    if not shutil.which(args.nvim):
        emit({"ok": False, "error": f"nvim not found ({args.nvim})"})
        return 2
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        parser.error(f"unknown case(s) {unknown}; known: {', '.join(CASES)}")
    failed = 0
    for case in args.cases or CASES:
        result = run_case(case, args.nvim, args.keep)
        emit(result)
        failed += not result.get("ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
