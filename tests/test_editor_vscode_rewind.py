"""VS Code (code-server) end to end: "agentls: Rewind to an Earlier Turn" (issue 30).

Runs `editor-clients/vscode/e2e/rewind.mjs`: code-server with the extension from its .vsix,
driven by Playwright in Debian's chromium, against the scripted model. A review-mode session
of two turns: turn 1 creates notes.txt (left staged); turn 2, a follow-up from the agent
view, renames `greet` in hello.py and creates extra.txt (both staged), and hello.py is then
accepted (applied). The rewind's quick pick lists both turns with their prompts and the
files each changed; picking turn 1 drops turn 2's staged extra.txt and offers the reverse of
the applied hello.py change as a WorkspaceEdit in the Refactor Preview, which is applied.
Fails, naming the install script, when code-server, chromium or the extension's npm
dependencies are missing (`bash scripts/editor-deps.sh vscode`).
"""

from __future__ import annotations

from pathlib import Path

from tests.vscode_support import run_driver

FIRST = "first prompt: add notes.txt"
SECOND = "second prompt: rename greet and add extra.txt"
ORIGINAL = ["def greet(name):", '    return "Hello, " + name', "", "", 'print(greet("world"))']


def test_code_server_rewinds_to_turn_one_and_offers_the_reverse_of_the_applied_edit(
    tmp_path: Path,
) -> None:
    result = run_driver("rewind.mjs", "--screenshot", str(tmp_path / "rewind.png"))
    assert result["followUp"] is True  # turn 2 continued the session
    assert sorted(result["stagedBefore"]) == ["extra.txt", "hello.py", "notes.txt"], result
    assert result["helloAccepted"][0] == "def welcome(name):"

    # the turns, newest first, each with its prompt and the files it changed
    rows = result["turnRows"]
    assert len(rows) == 2, rows
    # (each row's label, then its description: the files that turn changed)
    assert rows == [f"2. {SECOND}, extra.txt, hello.py", f"1. {FIRST}, notes.txt"], rows

    # the applied change comes back as a reverse edit in the Refactor Preview
    assert any("hello.py" in r for r in result["reverseRows"]), result["reverseRows"]
    assert not any("extra.txt" in r or "notes.txt" in r for r in result["reverseRows"])
    assert result["helloAfter"] == ORIGINAL
    assert "1 later turn(s) dropped" in result["rewindMessage"], result["rewindMessage"]
    assert "1 file(s) changed since are reversed" in result["rewindMessage"]

    # turn 2's staged extra.txt is gone from the staged diff; turn 1's notes.txt stays
    assert result["stagedAfter"] == ["notes.txt"], result
    assert result["onDisk"] == {"notes": False, "extra": False}
