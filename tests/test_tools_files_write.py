"""edit_file, write_file, rename_file, delete_file: staged only, through the pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.workspace import Change
from tests.ws_support import Runner, lines_of, make_ctx, make_tree

APP = "def load(path):\n    return open(path).read()\n\n\ndef save(path, data):\n    pass\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path,
        {
            "app.py": APP,
            "dup.py": "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n",
            "win.txt": "first line\r\nsecond line\r\nthird line\r\n",
            "i18n.txt": "greeting = 'こんにちは 😀'\nfarewell = 'さようなら'\n",
            "blob.bin": b"\x00\x01binary",
            "pkg/mod.py": "",
        },
    )


@pytest.fixture
def run(root: Path) -> Runner:
    return Runner(make_ctx(root))


async def test_edit_is_staged_not_written(run: Runner, root: Path) -> None:
    out = await run.ok(
        "edit_file",
        path="app.py",
        old_string="open(path).read()",
        new_string="Path(path).read_text()",
    )
    assert "replaced 1 occurrence" in out
    assert "(now at line 2;" in out
    assert "     2\t    return Path(path).read_text()" in out
    assert (root / "app.py").read_text() == APP
    ws = run.ctx.workspace
    staged = ws.read_text(ws.resolve("app.py"), run.ctx.changes)
    assert staged == APP.replace("open(path).read()", "Path(path).read_text()")
    [change] = run.ctx.changes.entries()
    assert (change.kind, change.original_text, change.new_text) == ("modify", APP, staged)
    read = await run.ok("read_file", path="app.py", limit=2)
    assert "Path(path).read_text()" in read


async def test_edit_not_found_shows_closest_lines(run: Runner) -> None:
    message = await run.error(
        "edit_file",
        path="app.py",
        old_string="def save(path, dat):\n    pass",
        new_string="def save(path, data):\n    ...",
    )
    assert "old_string was not found in app.py" in message
    assert "at lines 5-6" in message
    assert "     5\tdef save(path, data):" in message
    assert run.ctx.changes.is_empty()


async def test_edit_hints_at_line_number_prefixes(run: Runner) -> None:
    message = await run.error(
        "edit_file", path="app.py", old_string="     1\tdef load(path):", new_string="x"
    )
    assert "line-number prefixes" in message


async def test_edit_several_matches(run: Runner) -> None:
    message = await run.error("edit_file", path="dup.py", old_string="x = 1", new_string="x = 9")
    assert "occurs 3 times" in message
    assert "at lines 1, 3, 5" in message
    assert "     3\tx = 1" in message  # each occurrence as read_file shows it
    assert "replace_all=true" in message
    out = await run.ok(
        "edit_file", path="dup.py", old_string="x = 1", new_string="x = 9", replace_all=True
    )
    assert "replaced 3 occurrences" in out
    ws = run.ctx.workspace
    expected = "x = 9\ny = 2\nx = 9\nz = 3\nx = 9\n"
    assert ws.read_text(ws.resolve("dup.py"), run.ctx.changes) == expected


async def test_edit_identical_strings_is_refused(run: Runner) -> None:
    message = await run.error("edit_file", path="app.py", old_string="pass", new_string="pass")
    assert "identical" in message


async def test_edit_keeps_crlf(run: Runner) -> None:
    await run.ok(
        "edit_file",
        path="win.txt",
        old_string="first line\nsecond line",
        new_string="first line\ninserted\nsecond line",
    )
    ws = run.ctx.workspace
    text = ws.read_text(ws.resolve("win.txt"), run.ctx.changes)
    assert text == "first line\r\ninserted\r\nsecond line\r\nthird line\r\n"


async def test_edit_unicode(run: Runner) -> None:
    out = await run.ok(
        "edit_file", path="i18n.txt", old_string="こんにちは 😀", new_string="你好 🎉"
    )
    assert "     1\tgreeting = '你好 🎉'" in out
    grep = await run.ok("grep", pattern="🎉")
    assert lines_of(grep) == ["i18n.txt:1: greeting = '你好 🎉'"]


async def test_edit_applies_to_unsaved_buffer_with_its_version(run: Runner, root: Path) -> None:
    ws = run.ctx.workspace
    ws.set_buffer(root / "app.py", "def load(path):\n    return cache[path]\n", 12)
    await run.ok("edit_file", path="app.py", old_string="cache[path]", new_string="cache.get(path)")
    [change] = run.ctx.changes.entries()
    assert change.base_version == 12
    assert change.original_text == "def load(path):\n    return cache[path]\n"
    assert change.new_text == "def load(path):\n    return cache.get(path)\n"


async def test_edit_creates_missing_file_with_empty_old_string(run: Runner) -> None:
    out = await run.ok("edit_file", path="new/thing.py", old_string="", new_string="A = 1\n")
    assert "Created new/thing.py" in out
    assert run.ctx.changes.entries() == [
        Change("create", run.ctx.workspace.resolve("new/thing.py"), new_text="A = 1\n")
    ]
    assert "already has content" in await run.error(
        "edit_file", path="app.py", old_string="", new_string="x"
    )


async def test_edit_refuses_binary_missing_and_plan_mode(run: Runner, root: Path) -> None:
    assert "binary" in await run.error("edit_file", path="blob.bin", old_string="a", new_string="b")
    assert "Did you mean: app.py" in await run.error(
        "edit_file", path="ap.py", old_string="a", new_string="b"
    )
    plan = Runner(make_ctx(root, mode="plan"))
    message = await plan.error("edit_file", path="app.py", old_string="pass", new_string="...")
    assert "plan mode" in message


async def test_write_file_creates_virtually(run: Runner, root: Path) -> None:
    out = await run.ok("write_file", path="src/deep/new.py", content="a = 1\nb = 2\n")
    assert "Created src/deep/new.py (2 lines" in out
    assert not (root / "src").exists()
    assert lines_of(await run.ok("list_files", path="src")) == ["src/deep/new.py"]
    assert "     2\tb = 2" in await run.ok("read_file", path="src/deep/new.py")


async def test_write_file_overwrites_keeping_crlf(run: Runner) -> None:
    out = await run.ok("write_file", path="win.txt", content="only\nlines\n")
    assert "was 3 lines, now 2 lines" in out
    assert "CRLF" in out
    ws = run.ctx.workspace
    assert ws.read_text(ws.resolve("win.txt"), run.ctx.changes) == "only\r\nlines\r\n"
    [change] = run.ctx.changes.entries()
    assert change.kind == "modify"
    assert change.original_text == "first line\r\nsecond line\r\nthird line\r\n"


async def test_write_file_refusals(run: Runner) -> None:
    assert "outside the workspace" in await run.error("write_file", path="../x.py", content="")
    assert "version-control" in await run.error("write_file", path=".git/config", content="")
    assert "is a directory" in await run.error("write_file", path="pkg", content="")
    assert "app.py is a file" in await run.error("write_file", path="app.py/x.py", content="")
    assert run.ctx.changes.is_empty()


async def test_rename_file(run: Runner) -> None:
    out = await run.ok("rename_file", path="app.py", new_path="lib/app.py")
    assert out.startswith("Renamed app.py → lib/app.py")
    assert "renamed to lib/app.py" in await run.error("read_file", path="app.py")
    assert "def load" in await run.ok("read_file", path="lib/app.py")
    await run.ok("edit_file", path="lib/app.py", old_string="pass", new_string="return None")
    ws = run.ctx.workspace
    [change] = run.ctx.changes.entries()
    assert (change.kind, change.old_path, change.path) == (
        "rename",
        ws.resolve("app.py"),
        ws.resolve("lib/app.py"),
    )
    assert change.original_text == APP
    assert change.new_text is not None
    assert "return None" in change.new_text


async def test_rename_refusals(run: Runner) -> None:
    assert "already exists" in await run.error("rename_file", path="app.py", new_path="dup.py")
    assert "directory" in await run.error("rename_file", path="pkg", new_path="pkg2")
    assert "File not found" in await run.error("rename_file", path="nope.py", new_path="x.py")
    assert "outside the workspace" in await run.error(
        "rename_file", path="app.py", new_path="../app.py"
    )
    assert "version-control" in await run.error("rename_file", path="app.py", new_path=".git/x")
    assert run.ctx.changes.is_empty()


async def test_delete_file(run: Runner) -> None:
    assert "Deleted dup.py" in await run.ok("delete_file", path="dup.py")
    assert "deleted earlier" in await run.error("read_file", path="dup.py")
    assert "dup.py" not in await run.ok("list_files")
    assert "File not found" in await run.error("delete_file", path="dup.py")
    await run.ok("write_file", path="tmp.py", content="x\n")
    await run.ok("delete_file", path="tmp.py")
    assert [c.kind for c in run.ctx.changes.entries()] == ["delete"]
    assert "directory" in await run.error("delete_file", path="pkg")
    await run.ok("delete_file", path="blob.bin")
