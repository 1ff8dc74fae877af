"""read_file through the real pipeline: numbering, paging, layers, odd files, big files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agentls.workspace import ChangeSet
from tests.ws_support import Runner, make_ctx, make_tree


@pytest.fixture
def run(tmp_path: Path) -> Runner:
    make_tree(
        tmp_path,
        {
            "app.py": "".join(f"line {n}\n" for n in range(1, 31)),
            "crlf.txt": "alpha\r\nbeta\r\n",
            "uni.txt": "héllo 世界 😀\nzweite Zeile\n",
            "empty.txt": "",
            "no_newline.txt": "a\nb",
            "latin1.txt": "caf\xe9 ok\n".encode("latin-1"),
            "blob.bin": b"\x00\x01\x02" * 100,
            "long.txt": "x" * 5000 + "\nshort\n",
        },
    )
    return Runner(make_ctx(tmp_path))


async def test_numbered_lines_and_footer(run: Runner) -> None:
    out = await run.ok("read_file", path="app.py")
    lines = out.splitlines()
    assert lines[0] == "     1\tline 1"
    assert lines[29] == "    30\tline 30"
    assert lines[-1] == "[lines 1-30 of 30]"


async def test_offset_limit_and_truncation_hint(run: Runner) -> None:
    out = await run.ok("read_file", path="app.py", offset=10, limit=5)
    lines = out.splitlines()
    assert lines[:5] == [f"{n:>6}\tline {n}" for n in range(10, 15)]
    assert lines[-1] == "[lines 10-14 of 30; truncated: call again with offset=15]"


async def test_offset_past_end_is_an_error(run: Runner) -> None:
    message = await run.error("read_file", path="app.py", offset=31)
    assert "has 30 lines" in message
    assert "between 1 and 30" in message


async def test_invalid_input_is_reported_by_the_pipeline(run: Runner) -> None:
    message = await run.error("read_file", path="app.py", offset=0)
    assert "InputValidationError" in message
    assert "offset" in message
    message = await run.error("read_file", file="app.py")
    assert "path" in message


async def test_unsaved_buffer_and_staged_edits_are_read(run: Runner, tmp_path: Path) -> None:
    ws = run.ctx.workspace
    ws.set_buffer(tmp_path / "app.py", "from the editor\n", 7)
    out = await run.ok("read_file", path="app.py")
    assert "     1\tfrom the editor" in out
    assert "unsaved editor buffer version 7" in out
    run.ctx.changes.stage_write(ws.resolve("app.py"), "staged\n", "from the editor\n", 7)
    out = await run.ok("read_file", path="app.py")
    assert "     1\tstaged" in out
    assert "staged in this session" in out


async def test_crlf_unicode_empty_and_last_line(run: Runner) -> None:
    out = await run.ok("read_file", path="crlf.txt")
    assert "     1\talpha\n     2\tbeta\n" in out
    assert "CRLF" in out
    assert "\r" not in out
    out = await run.ok("read_file", path="uni.txt")
    assert "     1\théllo 世界 😀" in out
    assert "empty" in await run.ok("read_file", path="empty.txt")
    out = await run.ok("read_file", path="no_newline.txt")
    assert "     2\tb" in out
    assert "[lines 1-2 of 2]" in out


async def test_long_lines_are_cut_with_a_marker(run: Runner) -> None:
    out = await run.ok("read_file", path="long.txt")
    first = out.splitlines()[0]
    assert first.startswith("     1\t" + "x" * 2000)
    assert "[line cut: 5000 chars]" in first
    assert "     2\tshort" in out


async def test_binary_and_undecodable_files(run: Runner) -> None:
    message = await run.error("read_file", path="blob.bin")
    assert "binary" in message
    out = await run.ok("read_file", path="latin1.txt")
    assert "caf\ufffd ok" in out
    assert "not valid UTF-8" in out


async def test_missing_directory_and_outside_paths(run: Runner) -> None:
    assert "Did you mean: app.py" in await run.error("read_file", path="ap.py")
    assert "outside the workspace" in await run.error("read_file", path="../etc/passwd")
    make_tree(run.ctx.workspace.roots[0], {"pkg/a.py": ""})
    assert "is a directory" in await run.error("read_file", path="pkg")


async def test_deleted_file_reads_as_missing(run: Runner) -> None:
    ws = run.ctx.workspace
    run.ctx.changes.stage_delete(ws.resolve("app.py"), "x")
    assert "deleted earlier in this session" in await run.error("read_file", path="app.py")


async def test_fifty_megabyte_file_pages_by_offset(tmp_path: Path) -> None:
    filler = b"abcdefghij" * 5 + b"\n"  # 51 bytes per line
    count = 1_000_000
    big = tmp_path / "big.log"
    with big.open("wb") as fh:
        fh.write(filler * (count // 2))
        fh.write("MARKER ü\r\n".encode())
        fh.write(filler * (count // 2))
        fh.write(b"last line without newline")
    assert big.stat().st_size > 50_000_000
    run = Runner(make_ctx(tmp_path, ChangeSet()))
    started = time.monotonic()
    out = await run.ok("read_file", path="big.log", offset=count // 2 + 1, limit=2)
    tail = await run.ok("read_file", path="big.log", offset=count + 2)
    head = await run.ok("read_file", path="big.log", limit=3)
    elapsed = time.monotonic() - started
    total = count + 2
    lines = out.splitlines()
    assert lines[0] == f"{count // 2 + 1:>6}\tMARKER ü"
    assert lines[1] == f"{count // 2 + 2:>6}\tabcdefghij" + "abcdefghij" * 4
    assert f"of {total}; truncated: call again with offset={count // 2 + 3}" in lines[-1]
    assert f"{total:>6}\tlast line without newline" in tail
    assert f"[lines {total}-{total} of {total}" in tail
    assert head.splitlines()[-1].startswith(f"[lines 1-3 of {total}; truncated")
    assert elapsed < 10  # a whole-file read of 50 MB three times would not fit
