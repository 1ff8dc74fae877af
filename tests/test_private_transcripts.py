"""Transcripts and session state are private (issue 20 item 8), attacked as another local
user would: a world-readable folder, a folder swapped for a symlink to theirs, a symlink
planted at a transcript's name. Over real stdio: `agentls serve` writes them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentls.testing import ScriptedMessagesServer, text_turn
from tests.lsp_support import command, editor_session, server_env

pytestmark = pytest.mark.asyncio


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


async def _run(root: Path, env: dict[str, str], api: ScriptedMessagesServer, **args: str) -> str:
    api.extend(text_turn("hello"))
    async with editor_session("visual-studio-code", root, env) as editor:
        result = await command(editor, "agentls.run", {"prompt": "hi", "wait": True, **args})
    assert result["status"] == "completed", result
    return str(result["session"])


async def test_a_world_readable_transcript_folder_is_tightened_and_files_are_0600(
    tmp_path: Path, api: ScriptedMessagesServer
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    folder = tmp_path / "shared-transcripts"
    folder.mkdir()
    os.chmod(folder, 0o777)  # made by an older agentls, or by hand
    env = server_env(api.base_url, tmp_path / "t", AGENTLS_TRANSCRIPT_DIR=str(folder))
    session = await _run(root, env, api)
    assert mode(folder) == 0o700
    transcript = folder / f"{session}.jsonl"
    state = folder / f"{session}.state.json"
    assert transcript.is_file()
    assert state.is_file()
    assert mode(transcript) == 0o600
    assert mode(state) == 0o600


async def test_a_transcript_folder_swapped_for_a_symlink_gets_nothing(
    tmp_path: Path, api: ScriptedMessagesServer
) -> None:
    """Another user points the predictable folder at one they can read: nothing lands there."""
    root = tmp_path / "ws"
    root.mkdir()
    theirs = tmp_path / "attacker-readable"
    theirs.mkdir()
    os.chmod(theirs, 0o777)
    planted = tmp_path / "transcripts"
    planted.symlink_to(theirs)
    env = server_env(api.base_url, tmp_path / "t", AGENTLS_TRANSCRIPT_DIR=str(planted))
    await _run(root, env, api)
    assert list(theirs.iterdir()) == []


async def test_a_symlink_planted_at_a_transcript_name_is_not_written_through(
    tmp_path: Path, api: ScriptedMessagesServer
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    folder = tmp_path / "transcripts"
    env = server_env(api.base_url, tmp_path / "t", AGENTLS_TRANSCRIPT_DIR=str(folder))
    session = await _run(root, env, api)
    transcript = folder / f"{session}.jsonl"
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n")
    transcript.unlink()
    transcript.symlink_to(victim)  # the next run of this session must not append to it
    await _run(root, env, api, session=session)
    assert victim.read_text() == "the user's file\n"
    state = folder / f"{session}.state.json"
    assert mode(state) == 0o600
    assert not state.is_symlink()
