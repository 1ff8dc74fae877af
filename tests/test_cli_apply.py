"""`agentls apply SESSION` (issue 21): write a reviewed dry run's staged edits without
running the model again — rebased onto the files as they are now, or reported as
conflicts; and (issue 20 item 12) a staged path that now leads outside the workspace is
refused at delivery, through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, run_cli, write_tree

VALUES = "".join(f"v{n} = {n}\n" for n in range(1, 13))


def _dry_run(api: ScriptedMessagesServer, root: Path, env: dict[str, str], *calls: object) -> str:
    api.extend(tool_turn(_read(), *calls), text_turn("done"))  # type: ignore[arg-type]
    result = run_cli("run", "change it", "-w", str(root), "--json", env=env)
    assert result.code == 0, result.stderr
    session: str = json.loads(result.stdout)["session"]
    return session


def _read(path: str = "values.py") -> tuple[str, dict[str, str]]:
    """Edits need a read in the session first (read before edit)."""
    return ("read_file", {"path": path})


def _edit(old: str, new: str, path: str = "values.py") -> tuple[str, dict[str, str]]:
    return ("edit_file", {"path": path, "old_string": old, "new_string": new})


def test_a_dry_run_names_apply_and_apply_writes_without_the_model(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "ws", {"values.py": VALUES})
    env = cli_env(api.base_url, tmp_path / "state", AGENTLS_READ_BEFORE_EDIT="1")
    api.extend(tool_turn(_read(), _edit("v10 = 10\n", "v10 = 100\n")), text_turn("done"))
    shown = run_cli("run", "change v10", "-w", str(root), env=env)
    assert shown.code == 0, shown.stderr
    assert (root / "values.py").read_text() == VALUES  # a dry run writes nothing
    session = json.loads(run_cli("sessions", "-w", str(root), "--json", env=env).stdout)[0]["id"]
    assert f"apply {session}" in shown.stdout  # the closing hint names the command
    requests = len(api.requests)
    applied = run_cli("apply", session[:6], env=env)  # a prefix, from anywhere
    assert applied.code == 0, applied.stdout + applied.stderr
    assert "v10 = 100" in (root / "values.py").read_text()
    assert "values.py" in applied.stdout
    assert "written" in applied.stdout
    assert len(api.requests) == requests  # no model request
    again = run_cli("apply", session, env=env)
    assert again.code == 0
    assert "Nothing staged" in again.stdout


def test_apply_rebases_onto_the_users_later_change(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "ws", {"values.py": VALUES})
    env = cli_env(api.base_url, tmp_path / "state", AGENTLS_READ_BEFORE_EDIT="1")
    session = _dry_run(api, root, env, _edit("v10 = 10\n", "v10 = 100\n"))
    (root / "values.py").write_text(VALUES.replace("v11 = 11", "v11 = 'user'"))
    applied = run_cli("apply", session, "--json", env=env)
    assert applied.code == 0, applied.stdout + applied.stderr
    result = json.loads(applied.stdout)
    assert result["applied"] is True
    assert not result.get("conflicts")
    assert [Path(s["path"]).name for s in result["stale"]] == ["values.py"]
    text = (root / "values.py").read_text()
    assert "v10 = 100\n" in text
    assert "v11 = 'user'\n" in text


def test_apply_leaves_a_conflict_staged_and_overwrites_nothing(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "ws", {"values.py": VALUES})
    env = cli_env(api.base_url, tmp_path / "state", AGENTLS_READ_BEFORE_EDIT="1")
    session = _dry_run(api, root, env, _edit("v10 = 10\n", "v10 = 100\n"))
    mine = VALUES.replace("v10 = 10", "v10 = 'mine'")
    (root / "values.py").write_text(mine)
    applied = run_cli("apply", session, env=env)
    assert applied.code == 1
    assert "not applied" in applied.stdout
    assert "overlap" in applied.stdout
    assert (root / "values.py").read_text() == mine
    listed = json.loads(run_cli("sessions", "-w", str(root), "--json", env=env).stdout)
    assert [Path(p).name for p in listed[0]["staged"]] == ["values.py"]


def test_apply_refuses_a_path_swapped_for_a_symlink_out_of_the_workspace(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "ws", {"sub/keep.txt": "x\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    env = cli_env(api.base_url, tmp_path / "state", AGENTLS_READ_BEFORE_EDIT="1")
    session = _dry_run(
        api,
        root,
        env,
        ("write_file", {"path": "sub/new.txt", "content": "planted\n"}),
        ("write_file", {"path": "ok.txt", "content": "fine\n"}),
    )
    shutil.rmtree(root / "sub")
    (root / "sub").symlink_to(Path("..") / "outside")
    applied = run_cli("apply", session, env=env)
    assert applied.code == 1
    assert not (outside / "new.txt").exists()
    assert (root / "ok.txt").read_text() == "fine\n"  # the rest of the run is written
    flat = " ".join(applied.stdout.split())
    assert "outside the workspace" in flat
    assert "new.txt" in flat


def test_apply_of_an_unknown_session_is_a_clear_error(tmp_path: Path) -> None:
    env = cli_env(None, tmp_path / "state")
    result = run_cli("apply", "nosuchsession", env=env)
    assert result.code == 2
    assert "no saved session" in result.stderr
    assert "Traceback" not in result.stderr


def test_interactive_apply_asks_per_hunk_and_the_reason_reaches_the_model(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "ws", {"values.py": VALUES})
    env = cli_env(api.base_url, tmp_path / "state")
    changed = VALUES.replace("v2 = 2", "v2 = 'two'").replace("v10 = 10", "ten = 10")
    session = _dry_run(api, root, env, ("write_file", {"path": "values.py", "content": changed}))
    # hunk 1: apply; hunk 2: reject, with a reason
    applied = run_cli("apply", session, "--interactive", env=env, input="y\nr\ncallers use v10\n")
    assert applied.code == 0, applied.stdout + applied.stderr
    assert "Apply this hunk [y,n,r,a,d,q,?]" in applied.stdout
    assert "+ten = 10" in applied.stdout
    assert "rejected: hunk 2 of" in applied.stdout
    assert "callers use v10" in applied.stdout
    assert (root / "values.py").read_text() == VALUES.replace("v2 = 2", "v2 = 'two'")
    again = run_cli("apply", session, env=env)
    assert "Nothing staged" in again.stdout, "the rejected hunk is no longer staged"

    api.extend(text_turn("ok"))
    resumed = run_cli("resume", session, "go on", "-w", str(root), "--json", env=env)
    assert resumed.code == 0, resumed.stderr
    last = json.dumps(api.message_requests[-1].json["messages"][-1])
    assert "The user rejected hunk 2 of values.py (line 10): callers use v10" in last


def test_interactive_apply_at_end_of_input_leaves_everything_staged(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "ws", {"values.py": VALUES})
    env = cli_env(api.base_url, tmp_path / "state")
    session = _dry_run(api, root, env, _edit("v10 = 10\n", "v10 = 100\n"))
    quit_early = run_cli("apply", session, "-i", env=env, input="")
    assert quit_early.code == 0, quit_early.stderr
    assert (root / "values.py").read_text() == VALUES
    assert json.loads(run_cli("sessions", "-w", str(root), "--json", env=env).stdout)[0]["hunks"]


def test_rewind_lists_turns_and_goes_back_to_one(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "ws", {"values.py": VALUES})
    env = cli_env(api.base_url, tmp_path / "state")
    session = _dry_run(api, root, env, _edit("v1 = 1\n", "v1 = 100\n"))
    api.extend(tool_turn(_edit("v2 = 2\n", "v2 = 200\n")), text_turn("done"))
    again = run_cli("resume", session, "now v2", "-w", str(root), "--json", env=env)
    assert again.code == 0, again.stderr
    listed = run_cli("rewind", session, env=env)
    assert listed.code == 0, listed.stderr
    assert "1. change it" in listed.stdout
    assert "2. now v2" in listed.stdout
    back = run_cli("rewind", session, "--turn", "1", env=env)
    assert back.code == 0, back.stderr
    assert "dropped: turn 2: now v2" in back.stdout
    applied = run_cli("apply", session, env=env)
    assert applied.code == 0, applied.stdout + applied.stderr
    text = (root / "values.py").read_text()
    assert "v1 = 100" in text
    assert "v2 = 2\n" in text
