"""`agentls demo`: the offline first run.

Copies the bundled sample project (a cart with two bugs and failing tests) to a temporary
folder, serves the bundled recorded scenario from an in-process scripted Messages-API
server, and runs a real session through exactly the path of `agentls run --apply`: the
language server subprocess, the tools (tests and lint in a shadow copy), the final
`WorkspaceEdit` applied to the files. Then it runs the project's tests on the result.
No API key, no network.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from agentls.headless.commands import RunOptions, agentls_command, run_agent
from agentls.headless.ui import make_console

PROMPT = "The cart tests fail. Find the bugs, fix them, and make the tests pass."


def _scenario() -> Any:
    """The recorded scenario; `search_symbols` falls back to `grep` where the server does not
    offer it (the turn is computed from the tools the request actually lists)."""
    from agentls.demo import SCENARIO
    from agentls.testing import RecordedRequest, Scenario, ToolUseBlock, Turn

    scenario = Scenario.from_file(SCENARIO)
    turns: list[Any] = []
    for turn in scenario.turns:
        assert isinstance(turn, Turn)
        if any(b.name == "search_symbols" for b in turn.tool_uses):

            def adapt(request: RecordedRequest, turn: Turn = turn) -> Turn:
                if "search_symbols" in request.tool_names:
                    return turn
                content = []
                for block in turn.content:
                    if isinstance(block, ToolUseBlock) and block.name == "search_symbols":
                        query = str(block.input.get("query", ""))
                        block = ToolUseBlock(
                            name="grep", input={"pattern": f"def {query}"}, id=block.id
                        )
                    content.append(block)
                return turn.model_copy(update={"content": content})

            turns.append(adapt)
        else:
            turns.append(turn)
    return Scenario(turns, scenario.description), [
        b.id
        for t in scenario.turns
        if isinstance(t, Turn)
        for b in t.tool_uses
        if b.name == "run_tests"
    ]


def _copy_sample(target: Path) -> Path:
    from agentls.demo import SAMPLE

    project = target / "shop"
    shutil.copytree(
        SAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.pyc")
    )
    return project


def _server_env(base_url: str, state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["ANTHROPIC_BASE_URL"] = base_url
    env["ANTHROPIC_API_KEY"] = "demo-no-key-needed"
    env["AGENTLS_TRANSCRIPT_DIR"] = str(state / "transcripts")
    for name in ("AGENTLS_MAX_TURNS", "AGENTLS_MODEL"):
        env.pop(name, None)
    return env


def _test_results(requests: list[Any], ids: list[str]) -> list[dict[str, object]]:
    """The agent's run_tests results, as the model received them."""
    found: dict[str, dict[str, object]] = {}
    for request in requests:
        for result in request.tool_results():
            if result.get("tool_use_id") in ids:
                content = result.get("content")
                if isinstance(content, list):
                    content = "".join(
                        str(b.get("text", "")) for b in content if isinstance(b, dict)
                    )
                try:
                    parsed = json.loads(str(content))
                except ValueError:
                    parsed = {"status": "error", "raw": str(content)[:200]}
                found[str(result["tool_use_id"])] = parsed if isinstance(parsed, dict) else {}
    return [found[i] for i in ids if i in found]


def _describe(result: dict[str, object]) -> str:
    counts = ", ".join(f"{result[k]} {k}" for k in ("passed", "failed", "errors") if result.get(k))
    return f"{result.get('status')}" + (f" ({counts})" if counts else "")


def demo(*, keep: bool = False, directory: Path | None = None, as_json: bool = False) -> int:
    from agentls.testing import ScriptedMessagesServer

    console = make_console(sys.stdout)
    base = Path(tempfile.mkdtemp(prefix="agentls-demo-")) if directory is None else directory
    base.mkdir(parents=True, exist_ok=True)
    try:
        project = _copy_sample(base)
        scenario, test_ids = _scenario()
        if not as_json:
            kept = keep or directory is not None
            console.print(
                f"[bold]agentls demo[/bold] — offline: a recorded model session fixes two bugs "
                f"in a sample project.\nProject copied to {project}"
                + ("" if kept else " (deleted afterwards; --keep keeps it)")
                + "\n"
            )
        with ScriptedMessagesServer(scenario) as api:
            options = RunOptions(
                prompt=PROMPT,
                workspace=project,
                output="apply",
                json=as_json,
                emit_json=False,
                show_transcript=keep or directory is not None,
                env=_server_env(api.base_url, base),
            )
            code, result = asyncio.run(run_agent(options, console))
            agent_tests = _test_results(list(api.requests), test_ids)
        tests = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        green = tests.returncode == 0
        if not as_json:
            console.print()
            for index, outcome in enumerate(agent_tests, 1):
                console.print(f"agent's test run {index}: {_describe(outcome)}")
            summary = (tests.stdout.strip().splitlines() or ["(no output)"])[-1]
            mark = "[green]✓[/green]" if green else "[red]✗[/red]"
            console.print(f"{mark} pytest on the changed project: {summary}")
            if not green:
                console.print(tests.stdout[-3000:] + tests.stderr[-2000:])
            if code == 0 and green:
                console.print(
                    "\nThat was a real agentls session against a scripted model. With an API "
                    "key, run it on your project — a dry run shows the diff, then `apply` "
                    "writes what you reviewed without running the model again:\n"
                    f"  export ANTHROPIC_API_KEY=...\n"
                    f'  {agentls_command()} run "fix the failing test" -w /path/to/project\n'
                    f"  {agentls_command()} apply SESSION   # the id the run printed"
                )
        else:
            sys.stdout.write(
                json.dumps(
                    {**result, "agent_tests": agent_tests, "tests_passed": green},
                    ensure_ascii=False,
                    indent=2,
                )
                + "\n"
            )
        return code if code else (0 if green else 1)
    finally:
        if keep or directory is not None:
            if not as_json:
                console.print(
                    f"[dim]kept {base}; try more on it with "
                    f"{agentls_command()} run PROMPT -w {base / 'shop'} --diff[/dim]"
                )
        else:
            shutil.rmtree(base, ignore_errors=True)
