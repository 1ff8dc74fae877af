"""No background command outlives the server (issue 28, item 16): a real `agentls serve`
over stdio starts a sleeping background command for the model, and the LSP `shutdown`
request kills it — before `exit`, so it is the host's shutdown that does it, not the
process ending."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import command, editor_session, server_env
from tests.sandbox_support import marked


async def test_lsp_shutdown_kills_the_background_commands(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    token = f"bg-{uuid.uuid4().hex[:8]}"
    start = ("run_command", {"command": f"sleep 300 # {token}", "run_in_background": True})
    api.extend(tool_turn(start), text_turn("The server runs in the background."))
    env = server_env(api.base_url, tmp_path / "state")
    async with editor_session("visual-studio-code", root, env) as editor:
        editor.choices[:] = ["Allow once"]
        result = await command(editor, "agentls.run", {"prompt": "start it", "wait": True})
        assert result["status"] == "completed", result
        for _ in range(100):
            if marked(token):
                break
            await asyncio.sleep(0.1)
        assert marked(token), "the background command did not start"
        await editor.client.shutdown_async(None)
        for _ in range(50):
            if not marked(token):
                break
            await asyncio.sleep(0.1)
        gone = marked(token) == []
        editor.client.exit(None)  # the session is over: no second `shutdown` on the way out
        await editor.client._server.wait()  # type: ignore[union-attr]
        editor.client.capabilities = None
    assert gone  # gone at `shutdown`, before `exit`
