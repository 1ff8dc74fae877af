"""ReDoS from a hostile repository (issue 20): patterns a cloned project writes into its
settings or ignore files — permission rules, hook matchers and `if` rules, secret globs,
`.gitignore` lines — meet a long crafted path, command or tool name, and the server must
not freeze. With Python's backtracking `re` each case below runs for hours; on RE2 it ends
at once.

Each case runs in a child process with a generous wall bound (a frozen `re` holds the GIL
and cannot be interrupted from a thread), and asserts the answer too, so the patterns still
mean what they meant.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.safety import load_safety

REPO = Path(__file__).resolve().parents[1]
WALL_SECONDS = 60
"""Far above the milliseconds these take on RE2, far below the hours of `re`."""

LONG_NAME = "a" * 200 + "c"
"""A file name that almost matches `*a*a*…*b`: every way to split it is tried by `re`."""
HOSTILE_GLOB = "*a*a*a*a*a*a*a*a*b"


def _finishes(code: str, *args: str) -> Any:
    """Run `code` (which prints one JSON value) in a child Python; fail if it hangs."""
    source = "import json, sys\n" + textwrap.dedent(code)
    try:
        done = subprocess.run(
            [sys.executable, "-c", source, *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=WALL_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"still matching after {WALL_SECONDS} s: the pattern backtracks")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _project(tmp_path: Path, settings: dict[str, Any]) -> Path:
    root = tmp_path / "ws"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(json.dumps(settings))
    (tmp_path / "home").mkdir()
    return root


# -- permission rules (apply even in an untrusted workspace) -----------------------------------

_RULES = """
    from pathlib import Path
    from agentls.agent.safety import load_safety
    from agentls.agent.permissions.guards import call_subject
    root = Path(sys.argv[1])
    safety = load_safety([root], home=root.parent / "home", project_trusted=False)
    assert not safety.problems, safety.problems
    def denied(tool, input):
        rule = safety.rules.first_hit("deny", call_subject(tool, input, [root]))
        return None if rule is None else rule.text
    long = sys.argv[2]
    print(json.dumps([
        denied("run_command", {"command": long}),
        denied("run_command", {"command": "x" + long[:-1] + "b"}),
        denied("read_file", {"path": long}),
        denied("read_file", {"path": "sub/x" + long[:-1] + "b"}),
    ]))
"""


def test_a_hostile_bash_wildcard_rule_meets_a_long_command_promptly(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "permissions": {
                "deny": [f"Bash({HOSTILE_GLOB})", f"Read(**/{HOSTILE_GLOB})"],
            }
        },
    )
    (root / "sub").mkdir()
    found = _finishes(_RULES, str(root), LONG_NAME)
    bash, read = f"Bash({HOSTILE_GLOB})", f"Read(**/{HOSTILE_GLOB})"
    assert found == [None, bash, None, read]


def test_a_bash_wildcard_rule_still_matches_as_written(tmp_path: Path) -> None:
    root = _project(tmp_path, {"permissions": {"deny": ["Bash(git * main)", "Bash(rm *)"]}})
    safety = load_safety([root], home=tmp_path / "home", project_trusted=False)
    from agentls.agent.permissions.guards import call_subject

    def hit(command: str) -> bool:
        subject = call_subject("run_command", {"command": command}, [root])
        return safety.rules.first_hit("deny", subject) is not None

    assert hit("git push origin main")
    assert hit("git push\norigin main")
    assert hit("rm")
    assert hit("rm -rf /")
    assert not hit("rmdir x")
    assert hit("ls && rm x")
    assert not hit("git push origin dev")


# -- hook matchers and `if` rules ---------------------------------------------------------------

_HOOKS = """
    from pathlib import Path
    from agentls.agent.safety import load_safety
    from agentls.agent.hooks.config import SubjectFactory
    root = Path(sys.argv[1])
    safety = load_safety([root], home=root.parent / "home", project_trusted=True)
    tool = "mcp__evil__" + "a" * 60 + "-"
    matched = [c.command for c in safety.hook_config.commands("PreToolUse", tool)]
    guarded = safety.hook_config.commands("PreToolUse", "run_command")
    long = sys.argv[2]
    applies = [
        c.applies("run_command", SubjectFactory({"command": command}, [root]), root)
        for c in guarded
        for command in (long, long[:-1] + "b")
    ]
    ok = safety.hook_config.commands("PreToolUse", "mcp__evil__aaaa")
    print(json.dumps([matched, applies, [c.command for c in ok], safety.problems]))
"""


def test_a_hostile_hook_matcher_and_if_rule_meet_long_names_promptly(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "mcp__evil__(a+)+$", "hooks": [{"command": "echo nested"}]},
                    {
                        "matcher": "Bash",
                        "hooks": [{"command": "echo guard", "if": f"Bash({HOSTILE_GLOB})"}],
                    },
                ]
            }
        },
    )
    matched, applies, ok, problems = _finishes(_HOOKS, str(root), LONG_NAME)
    assert problems == []
    assert matched == []  # the name ends in "-": no match, found out at once
    assert applies == [False, True]
    assert ok == ["echo nested"]  # the matcher still works on a name it matches


@pytest.mark.parametrize(
    ("matcher", "named"),
    [
        ("Edit(?=x)", "a look-ahead"),
        ("(?<!mcp__)Read", "a negative look-behind"),
        ("(Edit)\\1", "a back-reference"),
    ],
)
def test_a_matcher_only_a_backtracking_engine_runs_is_reported_not_run(
    tmp_path: Path, matcher: str, named: str
) -> None:
    hooks = {"PreToolUse": [{"matcher": matcher, "hooks": [{"command": "echo x"}]}]}
    root = _project(tmp_path, {"hooks": hooks})
    safety = load_safety([root], home=tmp_path / "home", project_trusted=True)
    assert not safety.hook_config.commands("PreToolUse", "edit_file")
    [problem] = [p for p in safety.problems if repr(matcher) in p]
    assert named in problem
    assert "RE2" in problem
    assert "linear-time" in problem
    # the same matcher in agentls's own settings format is refused the same way
    ours = load_safety([root], home=tmp_path / "home", section={"hooks": hooks})
    assert any(named in p and "RE2" in p for p in ours.problems), ours.problems


# -- secret patterns a project adds ------------------------------------------------------------

_SECRETS = """
    from pathlib import Path
    from agentls.agent.safety import load_safety
    root = Path(sys.argv[1])
    safety = load_safety([root], home=root.parent / "home", project_section={
        "secrets": {"extraPatterns": [sys.argv[3], "deploy/" + sys.argv[3]]}
    })
    long = sys.argv[2]
    print(json.dumps([
        safety.secrets.match(root / long),
        safety.secrets.match(root / "deploy" / long),
        safety.secrets.match(root / (long[:-1] + "B")),
        safety.secrets.match(root / "x" / "deploy" / (long[:-1] + "b")),
        safety.secrets.is_secret(root / ".env"),
        safety.problems,
    ]))
"""


def test_a_hostile_secret_pattern_meets_a_long_file_name_promptly(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "home").mkdir()
    found = _finishes(_SECRETS, str(root), LONG_NAME, HOSTILE_GLOB)
    plain, nested, upper, deep, env, problems = found
    assert plain is None
    assert nested is None
    assert upper == HOSTILE_GLOB  # case-blind, like every secret pattern
    assert deep in (HOSTILE_GLOB, f"deploy/{HOSTILE_GLOB}")
    assert env is True
    assert problems == []


# -- .gitignore lines of the repository ---------------------------------------------------------

_WALK = """
    from pathlib import Path
    from agentls.workspace.ignore import IgnoreRules
    root = Path(sys.argv[1])
    rules = IgnoreRules([root])
    print(json.dumps(sorted(str(Path(p).relative_to(root)) for p in rules.walk(root))))
"""


def test_a_hostile_gitignore_line_meets_a_long_file_name_promptly(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / ".gitignore").write_text(f"*.log\n{HOSTILE_GLOB}\nsrc/**/{HOSTILE_GLOB}\n")
    (root / LONG_NAME).write_text("kept\n")
    (root / "src" / LONG_NAME).write_text("kept\n")
    (root / (LONG_NAME[:-1] + "b")).write_text("ignored\n")
    (root / "src" / "x.log").write_text("ignored\n")
    found = _finishes(_WALK, str(root))
    assert found == sorted([".gitignore", LONG_NAME, f"src/{LONG_NAME}"])
