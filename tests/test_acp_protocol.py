"""`agentls acp` against bad input: every answer is a JSON-RPC error, the process stays up,
and nothing but protocol ever reaches stdout.

Raw pipes (no SDK in between, so the bytes are the agent's own) and both SDK clients.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentls.testing import ScriptedMessagesServer, text_turn
from tests.acp_support import (
    CLIENTS,
    AcpError,
    FakeEditor,
    acp_client,
    agent_command,
    agent_env,
    initialize,
    new_session,
    prompt,
)


class RawPeer:
    """`agentls acp` on plain pipes: lines in, lines out, every stdout byte kept."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[bytes] = []
        self._next = 100

    async def send_line(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()

    async def read_message(self) -> dict[str, Any]:
        """The next message; notifications (session updates) are kept but skipped."""
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), 120)
            assert line, "the agent closed stdout"
            self.lines.append(line)
            message = json.loads(line)
            if "id" in message:
                return dict(message)

    async def call(self, method: str, params: Any) -> dict[str, Any]:
        self._next += 1
        body = {"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}
        await self.send_line(json.dumps(body).encode())
        answer = await self.read_message()
        assert answer["id"] == self._next
        return answer


async def start_raw(env: dict[str, str], cwd: Path) -> RawPeer:
    command = agent_command()
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    return RawPeer(process)


async def test_raw_bad_input_gets_json_rpc_errors_and_the_agent_stays_up(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    peer = await start_raw(agent_env(api.base_url, tmp_path / "home"), root)
    try:
        await peer.send_line(b"this is not json")
        error = await peer.read_message()
        assert error["id"] is None
        assert error["error"]["code"] == -32700
        await peer.send_line(b'[{"jsonrpc": "2.0", "id": 1, "method": "initialize"}]')
        assert (await peer.read_message())["error"]["code"] == -32600
        await peer.send_line(b'{"jsonrpc": "2.0", "id": 2, "method": 42}')
        assert (await peer.read_message())["error"]["code"] == -32600

        assert (await peer.call("no/such_method", {}))["error"]["code"] == -32601
        answer = await peer.call("session/prompt", {"sessionId": "nope", "prompt": []})
        assert answer["error"]["code"] == -32602  # a prompt before any session/new
        assert "session/new" in answer["error"]["message"]
        ok = await peer.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert ok["result"]["agentInfo"]["name"] == "agentls"
        for params in (
            None,
            {"cwd": "relative/path", "mcpServers": []},
            {"cwd": str(tmp_path / "missing"), "mcpServers": []},
            {"cwd": str(root), "mcpServers": [{"type": "acp", "name": "x", "serverId": "s1"}]},
        ):
            answer = await peer.call("session/new", params)
            assert answer["error"]["code"] == -32602, params
        session = (await peer.call("session/new", {"cwd": str(root), "mcpServers": []}))["result"]
        bad_prompts: list[Any] = [
            {"sessionId": session["sessionId"], "prompt": "not a list"},
            {"sessionId": 5, "prompt": []},
            {
                "sessionId": session["sessionId"],
                "prompt": [{"type": "audio", "data": "", "mimeType": "audio/wav"}],
            },
            {
                "sessionId": session["sessionId"],
                "prompt": [{"type": "image", "data": "", "mimeType": "image/tiff"}],
            },
            {"sessionId": session["sessionId"], "prompt": []},
        ]
        for params in bad_prompts:
            answer = await peer.call("session/prompt", params)
            assert answer["error"]["code"] == -32602, params
            assert answer["error"]["message"]
        answer = await peer.call(
            "session/set_mode", {"sessionId": session["sessionId"], "modeId": "yolo"}
        )
        assert answer["error"]["code"] == -32602
        assert "yolo" in answer["error"]["message"]
        # still serving: a real prompt works
        api.extend(text_turn("still here"))
        done = await peer.call(
            "session/prompt",
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hi"}]},
        )
        assert done["result"]["stopReason"] == "end_turn"
        assert peer.process.returncode is None
    finally:
        assert peer.process.stdin is not None
        peer.process.stdin.close()
        rest, stderr = await asyncio.wait_for(peer.process.communicate(), 60)
    # nothing but JSON-RPC on stdout, from the first byte to the last
    for line in [*peer.lines, *rest.splitlines(keepends=True)]:
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert peer.process.returncode == 0, stderr.decode()[-2000:]


def test_stray_writes_to_stdout_go_to_stderr() -> None:
    """A `print`, a library or a child process writing to descriptor 1 cannot corrupt the
    protocol: after `claim_stdout` only the protocol's own descriptor reaches stdout."""
    snippet = (
        "import os, subprocess, sys\n"
        "from agentls.acp.serve import claim_stdout\n"
        "fd = claim_stdout()\n"
        "print('stray print')\n"
        "os.write(1, b'stray write\\n')\n"
        "subprocess.run(['echo', 'stray child'])\n"
        'os.write(fd, b\'{"jsonrpc": "2.0"}\\n\')\n'
    )
    done = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout == '{"jsonrpc": "2.0"}\n'
    assert "stray print" in done.stderr
    assert "stray write" in done.stderr
    assert "stray child" in done.stderr


@pytest.mark.parametrize("kind", CLIENTS)
async def test_bad_input_through_the_sdk_clients(
    kind: str, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    env = agent_env(api.base_url, tmp_path / "home")
    async with acp_client(kind, FakeEditor(), env, root) as client:
        await initialize(client)
        with pytest.raises(AcpError) as before_new:  # a prompt before session/new
            await prompt(client, "0123456789ab", "hello")
        assert before_new.value.code == -32602
        session = await new_session(client, root)
        with pytest.raises(AcpError) as unknown:
            await prompt(client, "not-a-session", "hello")
        assert unknown.value.code == -32602
        assert "not-a-session" in unknown.value.message
        with pytest.raises(AcpError) as malformed:
            await client.request(
                "session/prompt", {"sessionId": session, "prompt": [{"type": 7}]}, raw=True
            )
        assert malformed.value.code == -32602
        with pytest.raises(AcpError) as mode:
            await client.request("session/set_mode", {"sessionId": session, "modeId": "nope"})
        assert mode.value.code == -32602
        assert client.agent_alive
        api.extend(text_turn("fine"))
        assert (await prompt(client, session, "and now?"))["stopReason"] == "end_turn"


async def test_a_run_that_cannot_start_says_why(tmp_path: Path) -> None:
    """No credentials: the prompt is answered `auth_required` naming what is missing (the
    client offers the advertised authMethods)."""
    root = tmp_path / "proj"
    root.mkdir()
    async with acp_client(
        "python", FakeEditor(), agent_env(None, tmp_path / "home"), root
    ) as client:
        await initialize(client)
        session = await new_session(client, root)
        with pytest.raises(AcpError) as failed:
            await prompt(client, session, "hello")
        assert failed.value.code == -32000
        assert "ANTHROPIC_API_KEY" in failed.value.data["reason"]
        assert client.agent_alive
