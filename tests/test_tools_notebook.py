"""Notebooks: read_file renders cells; notebook_edit replaces, inserts and deletes cells with
nbformat, staged, and the result stays a valid notebook (`nbformat.validate`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from tests.ws_support import Runner, make_ctx

FIXTURE = Path(__file__).parent / "fixtures" / "notebooks" / "sales.ipynb"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copy(FIXTURE, tmp_path / "sales.ipynb")
    (tmp_path / "notes.txt").write_text("plain\n")
    return tmp_path


@pytest.fixture
def run(root: Path) -> Runner:
    return Runner(make_ctx(root))


def staged_notebook(run: Runner, name: str = "sales.ipynb") -> nbformat.NotebookNode:
    ws = run.ctx.workspace
    text = ws.read_text(ws.resolve(name), run.ctx.changes)
    notebook = nbformat.reads(text, as_version=4)
    nbformat.validate(notebook)  # raises if the edit broke the format
    return notebook


async def test_read_file_renders_cells_with_ids_outputs_and_summarised_images(
    run: Runner,
) -> None:
    out = await run.ok("read_file", path="sales.ipynb")
    assert "[notebook sales.ipynb: 4 cells, nbformat 4.5, kernel python3 (python)" in out
    assert '<cell cell_id="intro" cell_number=0 type=markdown>' in out
    assert "     1\t# Sales analysis" in out
    assert '<cell cell_id="load" cell_number=1 type=code execution_count=1>' in out
    assert "     4\tmath.fsum(values)" in out
    assert "[stdout]\n6" in out
    assert "[1, 2, 3]" in out
    assert "[image/png image, 4.3 KB, not shown]" in out
    assert "iVBORw0KGgo" not in out
    assert "[error] ZeroDivisionError: division by zero" in out
    assert "\x1b[" not in out  # ANSI colours stripped from tracebacks
    assert '"cell_type"' not in out  # not the raw JSON


async def test_read_file_pages_notebooks_by_cell(run: Runner) -> None:
    out = await run.ok("read_file", path="sales.ipynb", offset=3, limit=1)
    assert "cell_number=2" in out
    assert "cell_number=1 " not in out
    assert "cell_number=3" not in out
    assert "[cell_number 2-2 of 4 shown; call again with offset=4 for the next]" in out
    message = await run.error("read_file", path="sales.ipynb", offset=9)
    assert "there is no cell_number 8" in message


async def test_long_outputs_are_capped(run: Runner, root: Path) -> None:
    notebook = nbformat.read(root / "sales.ipynb", as_version=4)
    notebook.cells[1].outputs[0]["text"] = "line\n" * 5000
    nbformat.write(notebook, root / "sales.ipynb")
    out = await run.ok("read_file", path="sales.ipynb")
    assert "[output cut: 24999 characters in all]" in out
    assert len(out) < 12_000


async def test_a_broken_notebook_is_shown_as_text_with_the_reason(run: Runner, root: Path) -> None:
    (root / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    out = await run.ok("read_file", path="broken.ipynb")
    assert '1\t{"cells": [' in out
    assert "broken.ipynb is not a valid notebook" in out


async def test_replace_clears_outputs_and_keeps_the_file_valid(run: Runner, root: Path) -> None:
    before = (root / "sales.ipynb").read_text()
    out = await run.ok(
        "notebook_edit", path="sales.ipynb", cell_id="load", new_source="values = [4, 5]"
    )
    assert 'Replaced cell_number 1 (cell_id="load")' in out
    assert "outputs were cleared" in out
    assert (root / "sales.ipynb").read_text() == before  # staged, not written
    notebook = staged_notebook(run)
    cell = notebook.cells[1]
    assert (cell.source, cell.outputs, cell.execution_count) == ("values = [4, 5]", [], None)
    assert cell.id == "load"
    assert notebook.cells[2].outputs  # other cells keep their outputs
    # the JSON keeps the file's layout: only the edited cell's lines differ
    [change] = run.ctx.changes.entries()
    assert change.new_text is not None
    old_lines, new_lines = before.splitlines(), change.new_text.splitlines()
    assert old_lines[:12] == new_lines[:12]
    assert old_lines[-20:] == new_lines[-20:]


async def test_replace_can_change_the_cell_type(run: Runner) -> None:
    await run.ok(
        "notebook_edit",
        path="sales.ipynb",
        cell_number=2,
        new_source="Values are *shown* here.",
        cell_type="markdown",
    )
    cell = staged_notebook(run).cells[2]
    assert (cell.cell_type, cell.id) == ("markdown", "show")
    assert "outputs" not in cell
    assert "execution_count" not in cell


async def test_insert_after_an_id_at_a_number_and_first(run: Runner) -> None:
    await run.ok(
        "notebook_edit",
        path="sales.ipynb",
        cell_id="load",
        new_source="total = sum(values)",
        cell_type="code",
        edit_mode="insert",
    )
    await run.ok(
        "notebook_edit",
        path="sales.ipynb",
        cell_number=5,
        new_source="## The end",
        cell_type="markdown",
        edit_mode="insert",
    )
    await run.ok(
        "notebook_edit",
        path="sales.ipynb",
        new_source="raw text",
        cell_type="raw",
        edit_mode="insert",
    )
    cells = staged_notebook(run).cells
    assert [c.cell_type for c in cells] == [
        "raw",
        "markdown",
        "code",
        "code",
        "code",
        "code",
        "markdown",
    ]
    assert cells[3].source == "total = sum(values)"
    assert cells[3].outputs == []
    assert len({c.id for c in cells}) == 7  # fresh, unique ids
    message = await run.error(
        "notebook_edit", path="sales.ipynb", new_source="x", edit_mode="insert"
    )
    assert "cell_type is required" in message


async def test_delete_and_unknown_cells(run: Runner) -> None:
    await run.ok("notebook_edit", path="sales.ipynb", cell_id="boom", edit_mode="delete")
    assert [c.id for c in staged_notebook(run).cells] == ["intro", "load", "show"]
    message = await run.error("notebook_edit", path="sales.ipynb", cell_id="nope", new_source="")
    assert "no cell with cell_id 'nope'" in message
    assert "intro, load, show" in message
    message = await run.error("notebook_edit", path="sales.ipynb", cell_number=7, new_source="")
    assert "cell_number 7 does not exist" in message


async def test_old_notebooks_get_no_ids(run: Runner, root: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.nbformat_minor = 4
    notebook.cells = [nbformat.v4.new_code_cell("a = 1")]
    notebook.cells[0].pop("id")
    (root / "old.ipynb").write_text(json.dumps(notebook, indent=2) + "\n")
    await run.ok(
        "notebook_edit",
        path="old.ipynb",
        cell_number=1,
        new_source="b = 2",
        cell_type="code",
        edit_mode="insert",
    )
    cells = staged_notebook(run, "old.ipynb").cells
    assert [c.source for c in cells] == ["a = 1", "b = 2"]
    assert all("id" not in c for c in cells)
    [change] = run.ctx.changes.entries()
    assert change.new_text is not None
    assert change.new_text.startswith('{\n  "cells"')


async def test_notebook_edit_refuses_other_files_and_paths_outside(run: Runner) -> None:
    message = await run.error("notebook_edit", path="notes.txt", new_source="x", cell_number=0)
    assert "not a Jupyter notebook" in message
    message = await run.error(
        "notebook_edit", path="../elsewhere.ipynb", new_source="x", cell_number=0
    )
    assert "outside the workspace" in message
    message = await run.error(
        "notebook_edit", path="sales.ipynb", cell_id="load", cell_number=1, new_source="x"
    )
    assert "not both" in message
