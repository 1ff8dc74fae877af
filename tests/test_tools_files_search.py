"""list_files and grep through the real pipeline, on the layered view."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ws_support import Runner, lines_of, make_ctx, make_tree


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path,
        {
            ".gitignore": "*.log\nbuild_out/\n",
            "src/app.py": "import os\n\ndef main():\n    return helper()\n",
            "src/util/helper.py": "def helper():\n    return 'Hello 世界 😀'\n",
            "src/util/crlf.py": "x = 1\r\ny = 2\r\n",
            "docs/guide.md": "# Guide\nhelper usage\n",
            "debug.log": "helper in a log\n",
            "build_out/gen.py": "def helper(): pass\n",
            "node_modules/lib/index.js": "helper()\n",
            ".git/HEAD": "helper\n",
            "data.bin": b"helper\x00\x01binary",
            "legacy.txt": "caf\xe9 helper\n".encode("latin-1"),
        },
    )


@pytest.fixture
def run(root: Path) -> Runner:
    return Runner(make_ctx(root))


async def test_list_files_applies_ignore_rules(run: Runner) -> None:
    out = await run.ok("list_files")
    assert lines_of(out) == [
        ".gitignore",
        "data.bin",
        "docs/guide.md",
        "legacy.txt",
        "src/app.py",
        "src/util/crlf.py",
        "src/util/helper.py",
    ]


async def test_list_files_path_and_pattern(run: Runner) -> None:
    assert lines_of(await run.ok("list_files", path="src", pattern="**/*.py")) == [
        "src/app.py",
        "src/util/crlf.py",
        "src/util/helper.py",
    ]
    assert lines_of(await run.ok("list_files", path="src", pattern="*.py")) == ["src/app.py"]
    assert lines_of(await run.ok("list_files", pattern="src/**/{helper,app}.py")) == [
        "src/app.py",
        "src/util/helper.py",
    ]
    out = await run.ok("list_files", pattern="*.md")
    assert "No files" in out
    assert "'**/*.md' would match 1 files" in out
    assert lines_of(await run.ok("list_files", path="node_modules")) == [
        "node_modules/lib/index.js"
    ]


async def test_list_files_sees_staged_creates_and_deletes(run: Runner, root: Path) -> None:
    ws, changes = run.ctx.workspace, run.ctx.changes
    changes.stage_write(ws.resolve("src/new/mod.py"), "x = 1\n", None)
    changes.stage_delete(ws.resolve("src/app.py"), "...")
    ws.set_buffer(root / "src" / "unsaved.py", "draft\n", 1)
    out = lines_of(await run.ok("list_files", path="src"))
    assert out == ["src/new/mod.py", "src/unsaved.py", "src/util/crlf.py", "src/util/helper.py"]
    assert lines_of(await run.ok("list_files", path="src/new")) == ["src/new/mod.py"]


async def test_list_files_caps_output(tmp_path: Path) -> None:
    make_tree(tmp_path, {f"f{n:04d}.txt": "" for n in range(620)})
    out = await Runner(make_ctx(tmp_path)).ok("list_files")
    assert len(lines_of(out)) == 500
    assert "120 more files not shown (620 in total)" in out


async def test_list_files_errors(run: Runner) -> None:
    assert "outside the workspace" in await run.error("list_files", path="..")
    assert "File not found" in await run.error("list_files", path="nope")
    assert "Invalid glob" in await run.error("list_files", pattern="*.{py")


async def test_grep_content_output(run: Runner) -> None:
    out = await run.ok("grep", pattern=r"def \w+")
    assert lines_of(out) == ["src/app.py:3: def main():", "src/util/helper.py:1: def helper():"]


async def test_grep_skips_ignored_binary_and_reads_lossy(run: Runner) -> None:
    out = await run.ok("grep", pattern="helper")
    found = {line.split(":")[0] for line in lines_of(out)}
    assert found == {"src/app.py", "src/util/helper.py", "docs/guide.md", "legacy.txt"}
    assert "legacy.txt:1: caf\ufffd helper" in out


async def test_grep_context_files_and_count(run: Runner) -> None:
    out = await run.ok("grep", pattern="return", path="src", context=1)
    assert lines_of(out) == [
        "src/app.py-3- def main():",
        "src/app.py:4:     return helper()",
        "--",
        "src/util/helper.py-1- def helper():",
        "src/util/helper.py:2:     return 'Hello 世界 😀'",
    ]
    files = await run.ok("grep", pattern="helper", output="files", glob="*.py")
    assert lines_of(files) == ["src/app.py", "src/util/helper.py"]
    count = await run.ok("grep", pattern="helper|main", output="count", path="src/app.py")
    assert lines_of(count) == ["src/app.py:2"]
    assert "[2 matching lines in 1 files]" in count


async def test_grep_options(run: Runner) -> None:
    assert lines_of(await run.ok("grep", pattern="HELLO", ignore_case=True)) == [
        "src/util/helper.py:2:     return 'Hello 世界 😀'"
    ]
    assert "No matches" in await run.ok("grep", pattern="HELLO")
    assert lines_of(await run.ok("grep", pattern="世界 😀")) == [
        "src/util/helper.py:2:     return 'Hello 世界 😀'"
    ]
    assert lines_of(await run.ok("grep", pattern=r"= 1$")) == ["src/util/crlf.py:1: x = 1"]
    assert lines_of(await run.ok("grep", pattern="helper", glob="!*.py", output="files")) == [
        "docs/guide.md",
        "legacy.txt",
    ]
    assert lines_of(await run.ok("grep", pattern="helper", path="node_modules")) == [
        "node_modules/lib/index.js:1: helper()"
    ]


async def test_grep_sees_buffers_and_staged_edits(run: Runner, root: Path) -> None:
    ws, changes = run.ctx.workspace, run.ctx.changes
    ws.set_buffer(root / "docs" / "guide.md", "# Guide\nunsaved needle\n", 3)
    changes.stage_write(ws.resolve("src/fresh.py"), "needle = 1\n", None)
    changes.stage_write(ws.resolve("src/app.py"), "needle()\n", "import os\n")
    changes.stage_rename(ws.resolve("src/util/helper.py"), ws.resolve("src/moved.py"), "...")
    out = await run.ok("grep", pattern="needle")
    assert lines_of(out) == [
        "docs/guide.md:2: unsaved needle",
        "src/app.py:1: needle()",
        "src/fresh.py:1: needle = 1",
    ]
    moved = await run.ok("grep", pattern="def helper", output="files")
    assert lines_of(moved) == ["src/moved.py"]
    changes.stage_delete(ws.resolve("src/fresh.py"))
    assert "src/fresh.py" not in await run.ok("grep", pattern="needle")


async def test_grep_invalid_regex_names_the_problem(run: Runner) -> None:
    message = await run.error("grep", pattern="foo(bar")
    assert "Invalid regex" in message
    assert "missing ), unterminated subpattern at position 3" in message
    assert "escape" in message


async def test_grep_caps_results(tmp_path: Path) -> None:
    make_tree(tmp_path, {f"f{n}.txt": "hit\nhit\n" for n in range(10)})
    run = Runner(make_ctx(tmp_path))
    out = await run.ok("grep", pattern="hit", max_results=5)
    assert len(lines_of(out)) == 5
    assert "more matches exist" in out
    out = await run.ok("grep", pattern="hit", max_results=20)
    assert len(lines_of(out)) == 20
    assert "more matches" not in out
    files = await run.ok("grep", pattern="hit", output="files", max_results=3)
    assert len(lines_of(files)) == 3
    assert "more matches exist" in files


async def test_grep_input_validation(run: Runner) -> None:
    assert "InputValidationError" in await run.error("grep", pattern="")
    assert "InputValidationError" in await run.error("grep", pattern="x", output="lines")
    assert "outside the workspace" in await run.error("grep", pattern="x", path="/")


async def test_grep_names_constructs_it_cannot_run_in_linear_time(run: Runner) -> None:
    ahead = await run.error("grep", pattern=r"helper(?=\()")
    assert "look-ahead `(?=...)` at position 6" in ahead
    assert "RE2/Rust" in ahead
    back = await run.error("grep", pattern=r"(\w)\1")
    assert "back-reference" in back
    huge = await run.error("grep", pattern="x" * 100_000)
    assert "at most 4,096" in huge
    assert len(huge) < 1000


async def test_grep_pathological_pattern_is_linear(run: Runner, root: Path) -> None:
    (root / "evil.txt").write_text(("a" * 40 + "b\n") * 2000)
    out = await run.ok("grep", pattern=r"(a+)+$")
    assert "No matches" in out
