"""`agentls doctor`: endpoint checks with a good key, a bad key and nothing listening."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn
from tests.cli_support import cli_env, run_cli


def _checks(stdout: str) -> dict[str, dict[str, object]]:
    payload = json.loads(stdout)
    return {f"{c['group']}:{c['name']}": c for c in payload["checks"]}


def test_doctor_passes_with_a_working_endpoint(tmp_path: Path) -> None:
    with ScriptedMessagesServer([text_turn("pong")], require_auth="good-key") as api:
        env = cli_env(api.base_url, tmp_path, ANTHROPIC_API_KEY="good-key")
        result = run_cli("doctor", "-w", str(tmp_path), env=env)
        assert result.code == 0, result.stdout + result.stderr
        assert "agentls is ready" in result.stdout
        assert "Python" in result.stdout
        assert "pygls" in result.stdout
        assert "ruff" in result.stdout
        assert "nvim" in result.stdout
        request = api.requests[0]
        assert request.json["max_tokens"] == 1  # a tiny request


def test_doctor_explains_a_rejected_key(tmp_path: Path) -> None:
    with ScriptedMessagesServer([], require_auth="the-right-key") as api:
        env = cli_env(api.base_url, tmp_path, ANTHROPIC_API_KEY="wrong-key")
        result = run_cli("doctor", "--json", "-w", str(tmp_path), env=env)
    assert result.code == 1, result.stdout + result.stderr
    checks = _checks(result.stdout)
    ping = next(c for k, c in checks.items() if k.startswith("model:request"))
    assert ping["status"] == "fail"
    assert "401" in str(ping["detail"])
    assert "ANTHROPIC_API_KEY" in str(ping["detail"])


def test_doctor_explains_an_unreachable_endpoint(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # the socket is closed: nothing listens on that port
    env = cli_env(f"http://127.0.0.1:{port}", tmp_path)
    result = run_cli("doctor", "-w", str(tmp_path), env=env)
    assert result.code == 1, result.stdout + result.stderr
    assert "cannot connect to" in result.stdout
    assert str(port) in result.stdout
    assert "essential check(s) failed" in result.stdout


def test_doctor_without_credentials_says_how_to_set_them(tmp_path: Path) -> None:
    result = run_cli("doctor", "--json", "-w", str(tmp_path), env=cli_env(None, tmp_path))
    assert result.code == 1
    creds = _checks(result.stdout)["model:credentials"]
    assert creds["status"] == "fail"
    assert "ANTHROPIC_API_KEY" in str(creds["detail"])


def test_doctor_explains_a_wrong_endpoint_path(tmp_path: Path) -> None:
    with ScriptedMessagesServer([]) as api:
        env = cli_env(api.base_url + "/v1/messages", tmp_path)  # a common mistake
        result = run_cli("doctor", "--json", "-w", str(tmp_path), env=env)
    assert result.code == 1, result.stdout + result.stderr
    ping = next(c for k, c in _checks(result.stdout).items() if k.startswith("model:request"))
    assert ping["status"] == "fail"
    assert "404" in str(ping["detail"])
    assert "ANTHROPIC_BASE_URL" in str(ping["detail"])
