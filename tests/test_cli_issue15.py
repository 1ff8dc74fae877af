"""Issue 15 through the CLI (`agentls run`, `tool`, `tools`, `commands`) as real
subprocesses, against the scripted model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn, web_search_turn
from tests.cli_support import cli_env, run_cli, write_tree
from tests.web_support import base_url, web_server

NOTEBOOK = Path(__file__).parent / "fixtures" / "notebooks" / "sales.ipynb"


def project(tmp_path: Path) -> Path:
    root = write_tree(
        tmp_path / "ws",
        {
            ".claude/commands/review.md": "---\ndescription: Review a file\n---\nReview @$0.\n",
            "src/app.py": "def main():\n    return 1\n",
        },
    )
    shutil.copy(NOTEBOOK, root / "sales.ipynb")
    return root


def test_a_command_expands_and_an_unknown_one_is_a_clear_error(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    env = cli_env(api.base_url, tmp_path / "state")
    api.extend(text_turn("Reviewed."))
    done = run_cli("run", "/review src/app.py", "-w", str(root), "--json", env=env)
    assert done.code == 0, done.stdout + done.stderr
    sent = api.message_requests[-1].json["messages"][0]["content"]
    text = "\n".join(b.get("text", "") for b in sent)
    assert "Review @src/app.py." in text
    assert "def main():" in text
    unknown = run_cli("run", "/deploy now", "-w", str(root), env=env)
    assert unknown.code == 1
    assert "unknown command /deploy (known commands: /review)" in unknown.stdout + unknown.stderr
    listed = run_cli("commands", "--json", "-w", str(root), env=env)
    assert listed.code == 0, listed.stderr
    assert [c["name"] for c in json.loads(listed.stdout)["commands"]] == ["review"]
    table = run_cli("commands", "-w", str(root), env=env)
    assert "/review" in table.stdout
    assert "Review a file (project)" in table.stdout


def test_a_skill_from_the_users_home(api: ScriptedMessagesServer, tmp_path: Path) -> None:
    root = project(tmp_path)
    env = cli_env(api.base_url, tmp_path / "state")
    write_tree(
        Path(env["HOME"]),
        {".claude/skills/pdf/SKILL.md": "---\ndescription: Fill PDF forms.\n---\nUse forms.py.\n"},
    )
    api.extend(tool_turn(("skill", {"name": "pdf"})), text_turn("Loaded."))
    done = run_cli("run", "fill the form", "-w", str(root), env=env)
    assert done.code == 0, done.stdout + done.stderr
    assert "Loading skill pdf" in done.stdout
    assert "- pdf: Fill PDF forms." in api.message_requests[-2].json["system"][0]["text"]
    assert "Use forms.py." in json.dumps(api.message_requests[-1].json["messages"][-1])


def test_web_fetch_refuses_a_private_address_and_says_which_setting(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    env = cli_env(api.base_url, tmp_path / "state")
    with web_server() as web:
        api.extend(tool_turn(("web_fetch", {"url": base_url(web) + "/page"})), text_turn("No."))
        done = run_cli(
            "run",
            "read the docs",
            "-w",
            str(root),
            "--allow",
            "WebFetch(domain:127.0.0.1)",
            env=env,
        )
        assert web.hits == []  # type: ignore[attr-defined]
    assert done.code == 0, done.stdout + done.stderr
    assert "✗ Fetching" in done.stdout
    result = api.message_requests[-1].json["messages"][-1]["content"][0]
    assert result["is_error"]
    assert "loopback address" in result["content"]
    assert "webFetch.allowedPrivateAddresses" in result["content"]


def test_web_search_offered_by_setting_and_shown_while_it_runs(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    (root / ".agentls.toml").write_text('[webSearch]\nenabled = "always"\nmaxUses = 2\n')
    env = cli_env(api.base_url, tmp_path / "state")
    tools = json.loads(run_cli("tools", "--json", "-w", str(root), env=env).stdout)
    assert {"type": "web_search_20250305", "name": "web_search", "max_uses": 2} in [
        {k: v for k, v in t.items() if k != "cache_control"} for t in tools
    ]
    api.extend(web_search_turn("pygls", [("https://pygls.readthedocs.io/", "pygls")], "Found."))
    done = run_cli("run", "search pygls", "-w", str(root), env=env)
    assert done.code == 0, done.stdout + done.stderr
    assert "→ Searching the web: pygls" in done.stdout
    # without the setting, a local endpoint is not offered the tool
    (root / ".agentls.toml").unlink()
    tools = json.loads(run_cli("tools", "--json", "-w", str(root), env=env).stdout)
    assert "web_search" not in [t["name"] for t in tools]


def test_notebook_edit_applied_from_the_cli(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = cli_env(None, tmp_path / "state")
    edit = {"path": "sales.ipynb", "cell_id": "load", "new_source": "values = [9]"}
    done = run_cli("tool", "notebook_edit", json.dumps(edit), "-w", str(root), "--apply", env=env)
    assert done.code == 0, done.stdout + done.stderr
    notebook = nbformat.read(root / "sales.ipynb", as_version=4)
    nbformat.validate(notebook)
    assert notebook.cells[1].source == "values = [9]"
    assert notebook.cells[1].outputs == []
    shown = run_cli("tool", "read_file", '{"path": "sales.ipynb"}', "-w", str(root), env=env)
    assert '<cell cell_id="load" cell_number=1 type=code>' in shown.stdout
