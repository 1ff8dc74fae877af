"""The first grep in a new server (issue 33): it starts while the secret rules are being
asked about every file (`Workspace.start_warm_up(secrets=True)`), waits for that instead
of asking them about the same files beside it, and still never shows a secret file."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.ws_support import Runner, make_ctx, make_tree


async def test_a_grep_during_the_secret_warm_up_asks_each_file_once_and_hides_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentls.workspace.secrets import SecretMatcher

    files = {f"src/m{n:03d}.py": f"value_{n} = 1\n" for n in range(150)}
    files["src/needle.py"] = "needle = 1\n"
    files[".env"] = "needle = 'sk-live-123'\n"
    files["deploy/id_rsa"] = "needle\n"
    root = make_tree(tmp_path / "ws", files).resolve()
    asked: list[str] = []
    real = SecretMatcher.reading_blocked_by

    def slow(self: SecretMatcher, path: object, *, resolve: bool = True) -> str | None:
        asked.append(os.fspath(path))  # type: ignore[arg-type]
        time.sleep(0.001)  # a large tree's warm-up: still under way when grep lists
        return real(self, path, resolve=resolve)  # type: ignore[arg-type]

    monkeypatch.setattr(SecretMatcher, "reading_blocked_by", slow)
    ctx = make_ctx(root)
    warm = ctx.workspace.start_warm_up(secrets=True)
    answer = await Runner(ctx).ok("grep", pattern="needle")
    warm.join(30)
    assert "src/needle.py" in answer
    assert ".env" not in answer
    assert "id_rsa" not in answer
    assert "sk-live" not in answer
    twice = sorted({path for path in asked if asked.count(path) > 1})
    assert twice == [], "grep asked again what the warm-up was asking"
    assert len(asked) == len(files)
