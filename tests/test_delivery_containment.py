"""Containment is checked again at delivery (issue 20 item 12).

The attack: the agent stages `sub/new.txt` (inside the workspace when staged); before the
user accepts, `sub` is swapped for a symlink to `../outside`. The editor would follow the
symlink, so the server must refuse that URI — and still deliver the run's other files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.lsp_support import command, editor_session, server_env

pytestmark = pytest.mark.asyncio


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    return root, outside


async def _stage(editor: object, path: str, content: str) -> None:
    result = await command(
        editor,  # type: ignore[arg-type]
        "agentls.tool",
        {"name": "write_file", "input": {"path": path, "content": content}},
    )
    assert not result["is_error"], result


async def test_a_folder_swapped_for_a_symlink_before_accept_is_refused(tmp_path: Path) -> None:
    root, outside = _workspace(tmp_path)
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session("visual-studio-code", root, env) as editor:
        await _stage(editor, "sub/new.txt", "planted\n")
        await _stage(editor, "ok.txt", "fine\n")
        shutil.rmtree(root / "sub")
        (root / "sub").symlink_to(Path("..") / "outside")
        result = await command(editor, "agentls.accept", {"session": "tool"})
        staged = await command(editor, "agentls.staged", {"session": "tool"})
    assert not (outside / "new.txt").exists()
    assert editor.text(root / "ok.txt") == "fine\n"  # the rest of the edit still arrives
    refused = {item["uri"]: item["reason"] for item in result["left_out"]}
    reason = refused[(root / "sub" / "new.txt").as_uri()]
    assert "outside the workspace" in reason
    assert str(outside / "new.txt") in reason
    assert [f["uri"] for f in staged["files"]] == [(root / "sub" / "new.txt").as_uri()]
    assert staged["files"][0]["current"] is None  # nothing read from outside either
    for edit in editor.edits:
        assert "new.txt" not in repr(edit)  # the editor never saw the escaping URI


async def test_a_rename_whose_source_now_escapes_is_refused(tmp_path: Path) -> None:
    root, outside = _workspace(tmp_path)
    (root / "sub" / "a.txt").write_text("mine\n")
    (outside / "a.txt").write_text("someone else's\n")
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session("visual-studio-code", root, env) as editor:
        result = await command(
            editor,
            "agentls.tool",
            {"name": "rename_file", "input": {"path": "sub/a.txt", "new_path": "moved.txt"}},
        )
        assert not result["is_error"], result
        shutil.rmtree(root / "sub")
        (root / "sub").symlink_to(Path("..") / "outside")
        accepted = await command(editor, "agentls.accept", {"session": "tool"})
    assert (outside / "a.txt").read_text() == "someone else's\n"
    assert not (root / "moved.txt").exists()
    assert accepted["applied"] is not True
    assert "outside the workspace" in accepted["left_out"][0]["reason"]
