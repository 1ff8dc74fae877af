"""The task suite for small local models (issue 29): agentls against aider, same server.

Twelve small real tasks, each a tiny workspace, a prompt, and a checker written before any
run (pass/fail on the files afterwards, or on the answer). Each task is run through
agentls (`agentls run --apply`, headless) and through aider (`aider-chat` 0.86.2, whole-file
edits, in its own venv) against one llama.cpp server (xllamacpp) on 127.0.0.1 serving a
Qwen2.5-Coder GGUF at temperature 0 with a fixed seed. Reported per agent: passes, turns
(model requests), tokens (prompt + generated, from the server's /metrics for both agents)
and wall time, with the 1-minute load average sampled before each run (bench/conditions.py):
on 2 shared cores, wall times are only comparable at the same load.

    bash scripts/deps/realmodel.sh                  # the server venv and the 0.5B model
    AGENTLS_REALMODEL_BIG=1 bash scripts/deps/realmodel.sh   # also the 1.5B model
    python bench/agent_tasks.py --model 0.5b [--agents agentls,aider] [--tasks a,b]

aider is found as $AIDER (default ~/.cache/agentls-models/aider-venv/bin/aider). Results
are printed as a Markdown table and written to bench/results/agent_tasks-<model>.json; the
workspaces, agentls's transcripts and aider's chat histories are kept under --keep (default
a new folder in the models directory) for reading the failures.
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
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.realmodel.support import BIG, MODELS, SMALL, llama_server  # noqa: E402

from conditions import Conditions, load  # noqa: E402  (bench/ is the script's folder)

Checker = Callable[[Path, str], bool]


@dataclass(frozen=True)
class Task:
    name: str
    files: dict[str, str]
    prompt: str
    check: Checker
    """(workspace after the run, the agent's answer) → passed."""


def _read(root: Path, name: str) -> str:
    path = root / name
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _pytest_passes(root: Path, *args: str) -> bool:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        timeout=120,
    )
    return run.returncode == 0


def _run_python(root: Path, code: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60
    )
    return run.stdout.strip() if run.returncode == 0 else f"ERROR {run.stderr[-300:]}"


# --- the tasks and their checkers (written before any run) ---------------------------------

TASKS: list[Task] = [
    Task(
        "off_by_one",
        {
            "window.py": "def last_n(items, n):\n    return items[len(items) - n - 1:]\n",
            "test_window.py": "from window import last_n\n\n\ndef test_last_two():\n"
            "    assert last_n([1, 2, 3, 4], 2) == [3, 4]\n",
        },
        "test_window.py fails: last_n returns one item too many. Fix last_n in window.py.",
        lambda root, answer: _pytest_passes(root, "test_window.py"),
    ),
    Task(
        "rename_function",
        {
            "lookup.py": "def find_usr(users, name):\n    return users.get(name)\n",
            "app.py": "from lookup import find_usr\n\n\ndef main(users):\n"
            "    return find_usr(users, 'ada')\n",
        },
        "Rename the function find_usr to find_user everywhere (lookup.py and app.py).",
        lambda root, answer: (
            "find_usr" not in _read(root, "lookup.py") + _read(root, "app.py")
            and _run_python(root, "import app; print(app.main({'ada': 1}))") == "1"
        ),
    ),
    Task(
        "add_parameter",
        {
            "greet.py": "def greet(name):\n    return 'Hello, ' + name\n",
        },
        "Add a parameter `greeting` with default 'Hello' to greet in greet.py and use it "
        "instead of the fixed 'Hello'.",
        lambda root, answer: (
            _run_python(
                root,
                "import greet; print(greet.greet('Bo'), '|', greet.greet('Bo', greeting='Hi'))",
            )
            == "Hello, Bo | Hi, Bo"
        ),
    ),
    Task(
        "lint_errors",
        {
            "tidy.py": "import os\nimport sys\n\n\ndef size(items):\n    unused = 1\n"
            "    return len(items)\n",
        },
        "tidy.py has two lint errors: an unused import (os) and an unused variable (unused). "
        "Fix both, keep `import sys`.",
        lambda root, answer: (
            "import os" not in _read(root, "tidy.py")
            and "unused = 1" not in _read(root, "tidy.py")
            and _run_python(root, "import tidy; print(tidy.size([1, 2]))") == "2"
        ),
    ),
    Task(
        "add_docstring",
        {"area.py": "def area(width, height):\n    return width * height\n"},
        "Add a one-line docstring to the function area in area.py.",
        lambda root, answer: (
            _run_python(root, "import area; print(bool(area.area.__doc__))") == "True"
        ),
    ),
    Task(
        "answer_question",
        {
            "config.py": "DEFAULT_PORT = 8731\n",
            "server.py": "from config import DEFAULT_PORT\n\n\ndef start(port=DEFAULT_PORT):\n"
            "    return port\n",
        },
        "Which port does start() in server.py use by default? Answer with the number.",
        lambda root, answer: "8731" in answer,
    ),
    Task(
        "fix_comparison",
        {
            "grade.py": "def passed(score):\n    return score > 50\n",
            "test_grade.py": "from grade import passed\n\n\ndef test_fifty_passes():\n"
            "    assert passed(50)\n",
        },
        "A score of exactly 50 should pass. Fix passed in grade.py so test_grade.py passes.",
        lambda root, answer: _pytest_passes(root, "test_grade.py"),
    ),
    Task(
        "new_function",
        {"mathx.py": "def double(x):\n    return 2 * x\n"},
        "Add a function triple(x) that returns 3 * x to mathx.py.",
        lambda root, answer: (
            _run_python(root, "import mathx; print(mathx.triple(4), mathx.double(2))") == "12 4"
        ),
    ),
    Task(
        "change_constant",
        {"limits.py": "MAX_RETRIES = 3\nTIMEOUT = 10\n"},
        "Set MAX_RETRIES to 5 in limits.py; leave TIMEOUT as it is.",
        lambda root, answer: (
            _run_python(root, "import limits; print(limits.MAX_RETRIES, limits.TIMEOUT)") == "5 10"
        ),
    ),
    Task(
        "fix_wrong_operator",
        {
            "calc.py": "def add(a, b):\n    return a - b\n",
            "test_calc.py": "from calc import add\n\n\ndef test_add():\n"
            "    assert add(2, 3) == 5\n",
        },
        "test_calc.py fails. Fix add in calc.py.",
        lambda root, answer: _pytest_passes(root, "test_calc.py"),
    ),
    Task(
        "find_definition",
        {
            "models.py": "class Invoice:\n    def total(self):\n        return 0\n",
            "report.py": "from models import Invoice\n",
        },
        "In which file is the class Invoice defined? Answer with the file name.",
        lambda root, answer: "models.py" in answer,
    ),
    Task(
        "none_guard",
        {
            "names.py": "def initials(name):\n    return name[0].upper()\n",
            "test_names.py": "from names import initials\n\n\ndef test_empty():\n"
            "    assert initials('') == ''\n\n\n"
            "def test_ada():\n    assert initials('ada') == 'A'\n",
        },
        "initials('') raises IndexError. Make it return '' for an empty name (names.py), so "
        "test_names.py passes.",
        lambda root, answer: _pytest_passes(root, "test_names.py"),
    ),
]


# --- running -------------------------------------------------------------------------------


@dataclass
class Outcome:
    task: str
    agent: str
    passed: bool
    turns: int = 0
    tokens: int = 0
    seconds: float = 0.0
    status: str = ""
    load: float = 0.0
    """The 1-minute load average when the run started."""
    notes: list[str] = field(default_factory=list)


def _workspace(task: Task, base: Path) -> Path:
    root = base / task.name
    root.mkdir(parents=True)
    for name, text in task.files.items():
        (root / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=False)
    return root


def _server_usage(url: str) -> int:
    """Tokens the server has processed so far (prompt tokens read, not those its prompt
    cache reused, plus tokens generated; its /metrics, else 0): the same count for both
    agents, whatever each reports of itself."""
    try:
        with urllib.request.urlopen(url + "/metrics", timeout=10) as reply:
            text = reply.read().decode()
    except OSError:
        return 0
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition(" ")
            values[name] = float(value or 0)
    tokens = values.get("llamacpp:prompt_tokens_total", 0) + values.get(
        "llamacpp:tokens_predicted_total", 0
    )
    return int(tokens)


def run_agentls(task: Task, root: Path, url: str, api: str) -> Outcome:
    state = root.parent / f".agentls-state-{task.name}"
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": url,
        "AGENTLS_MODEL": "qwen",
        "AGENTLS_MODEL_API": api,
        "AGENTLS_TEMPERATURE": "0",
        "AGENTLS_MAX_TURNS": "8",
        "AGENTLS_MAX_TOKENS": "1024",
        "AGENTLS_CONTEXT_WINDOW": "8192",
        "AGENTLS_STALL_TIMEOUT": "0",
        "AGENTLS_REQUEST_DEADLINE": "1800",
        "AGENTLS_TRANSCRIPT_DIR": str(state),
        "XDG_STATE_HOME": str(state),
        "XDG_CONFIG_HOME": str(state / "config"),
    }
    env.pop("ANTHROPIC_API_KEY", None)
    agentls = shutil.which("agentls") or str(Path(sys.executable).parent / "agentls")
    before = _server_usage(url)
    started = time.monotonic()
    run = subprocess.run(
        [agentls, "run", "--json", "--apply", "--trust", "--allow", "edit_file",
         "--allow", "write_file", "-w", str(root), task.prompt],
        env=env, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    seconds = time.monotonic() - started
    (root.parent / f"{task.name}.agentls.out").write_text(run.stdout + "\n" + run.stderr)
    try:
        result = json.loads(run.stdout)
    except ValueError:
        result = {"status": "crashed", "text": "", "usage": {}, "error": run.stderr[-500:]}
    tokens = _server_usage(url) - before
    answer = str(result.get("text") or "")
    outcome = Outcome(task.name, f"agentls ({api})", False, int(result.get("turns") or 0),
                      tokens, seconds, str(result.get("status")))  # fmt: skip
    if result.get("error"):
        outcome.notes.append(str(result["error"])[:200])
    outcome.notes.append("answer: " + answer[:200])
    outcome.passed = _checked(task, root, answer)
    return outcome


def run_aider(task: Task, root: Path, url: str, aider: str) -> Outcome:
    env = {**os.environ, "OPENAI_API_BASE": url + "/v1", "OPENAI_API_KEY": "local",
           "AIDER_ANALYTICS": "false", "AIDER_CHECK_UPDATE": "false"}  # fmt: skip
    history = root.parent / f".aider-{task.name}.md"
    before = _server_usage(url)
    started = time.monotonic()
    run = subprocess.run(
        [aider, "--model", "openai/qwen", "--edit-format", "whole", "--yes-always",
         "--no-git", "--no-auto-commits", "--no-pretty", "--no-stream", "--no-show-model-warnings",
         "--map-tokens", "1024", "--chat-history-file", str(history),
         "--input-history-file", os.devnull, "--message", task.prompt,
         *task.files.keys()],
        cwd=root, env=env, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    seconds = time.monotonic() - started
    (root.parent / f"{task.name}.aider.out").write_text(run.stdout + "\n" + run.stderr)
    answer = run.stdout
    turns = answer.count("Tokens:") or 1  # aider prints one "Tokens: …" line per request
    tokens = _server_usage(url) - before
    outcome = Outcome(
        task.name, "aider (whole)", False, turns, tokens, seconds, f"exit {run.returncode}"
    )
    outcome.passed = _checked(task, root, answer)
    return outcome


def _checked(task: Task, root: Path, answer: str) -> bool:
    try:
        return bool(task.check(root, answer))
    except Exception:
        return False


def table(outcomes: list[Outcome]) -> str:
    agents = sorted({o.agent for o in outcomes})
    lines = [
        "| agent | passed | turns | tokens | wall time | load (1 min) |",
        "|---|---|---|---|---|---|",
    ]
    for agent in agents:
        mine = [o for o in outcomes if o.agent == agent]
        loads = [o.load for o in mine]
        lines.append(
            f"| {agent} | {sum(o.passed for o in mine)}/{len(mine)} | "
            f"{sum(o.turns for o in mine)} | {sum(o.tokens for o in mine):,} | "
            f"{sum(o.seconds for o in mine):.0f} s | {min(loads):.1f}–{max(loads):.1f} |"
        )
    lines += ["", "| task | " + " | ".join(agents) + " |", "|---" * (len(agents) + 1) + "|"]
    for task in dict.fromkeys(o.task for o in outcomes):
        cells = []
        for agent in agents:
            hit = next((o for o in outcomes if o.task == task and o.agent == agent), None)
            cells.append("—" if hit is None else ("pass" if hit.passed else "fail")
                         + f" ({hit.turns} t, {hit.seconds:.0f} s)")  # fmt: skip
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("0.5b", "1.5b"), default="0.5b")
    parser.add_argument("--agents", default="agentls,aider")
    parser.add_argument("--tasks", default="", help="comma-separated task names (default all)")
    parser.add_argument("--api", choices=("messages", "chat-completions"), default="messages")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="folder for the workspaces")
    parser.add_argument("--out", default="", help="results file suffix (default the model)")
    args = parser.parse_args()
    model = SMALL if args.model == "0.5b" else BIG
    chosen = [t for t in TASKS if not args.tasks or t.name in args.tasks.split(",")]
    aider = os.environ.get("AIDER", str(MODELS / "aider-venv" / "bin" / "aider"))
    outcomes: list[Outcome] = []
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    keep = args.keep or Path(tempfile.mkdtemp(prefix=f"agent-tasks-{args.model}-", dir=MODELS))
    print(f"workspaces and transcripts: {keep}", flush=True)
    out = results / f"agent_tasks-{args.out or args.model}.json"
    cond = Conditions.start()
    with llama_server(model, ctx=8192, threads=args.threads) as url:
        for task in chosen:
            for agent in args.agents.split(","):
                root = _workspace(task, keep / agent)
                started_load = cond.sample()
                if agent == "agentls":
                    outcome = run_agentls(task, root, url, args.api)
                else:
                    outcome = run_aider(task, root, url, aider)
                outcome.load = started_load
                outcomes.append(outcome)
                print(json.dumps(asdict(outcome)), flush=True)
                out.write_text(json.dumps([asdict(o) for o in outcomes], indent=1) + "\n")
    print(table(outcomes))
    print(cond.report())
    print(f"load now {load():.2f}")


if __name__ == "__main__":
    main()
