"""The headless client's `workspace/applyEdit`: all-or-nothing, positions in the negotiated
encoding, dry-run overlay vs written files, and git-style diffs."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from agentls.headless.edits import EditLedger, unified_diff


def _edit(
    path: Path, start: tuple[int, int], end: tuple[int, int], text: str
) -> types.TextDocumentEdit:
    return types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(
            uri=path.as_uri(), version=None
        ),
        edits=[types.TextEdit(types.Range(types.Position(*start), types.Position(*end)), text)],
    )


@pytest.mark.parametrize(("encoding", "column"), [("utf-16", 4), ("utf-32", 3), ("utf-8", 6)])
def test_positions_follow_the_negotiated_encoding(
    tmp_path: Path, encoding: str, column: int
) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes("a🎉b = 1\r\nnext\r\n".encode())
    ledger = EditLedger(tmp_path, encoding=encoding, apply=True)
    # replace "b" — after the emoji (2 UTF-16 units, 1 code point, 4 UTF-8 bytes)
    result = ledger.handle(
        types.WorkspaceEdit(document_changes=[_edit(target, (0, column - 1), (0, column), "c")])
    )
    assert result.applied, result.failure_reason
    assert target.read_bytes().decode() == "a🎉c = 1\r\nnext\r\n"


def test_dry_run_keeps_files_and_later_edits_replace_earlier_ones(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("X = 1\nY = 1\n")
    ledger = EditLedger(tmp_path)
    first = ledger.handle(
        types.WorkspaceEdit(document_changes=[_edit(target, (0, 0), (1, 0), "X = 2\n")])
    )
    assert not first.applied
    assert first.failure_reason == "dry run"
    # the server re-sends all staged edits, computed against the unchanged disk
    both = [_edit(target, (0, 0), (2, 0), "X = 2\nY = 2\n")]
    ledger.handle(types.WorkspaceEdit(document_changes=both))
    assert target.read_text() == "X = 1\nY = 1\n"
    assert "+X = 2\n+Y = 2\n" in ledger.diff()


def test_an_edit_is_all_or_nothing(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text("A = 1\n")
    ledger = EditLedger(tmp_path, apply=True)
    missing = tmp_path / "missing.py"
    result = ledger.handle(
        types.WorkspaceEdit(
            document_changes=[
                _edit(good, (0, 0), (1, 0), "A = 2\n"),
                _edit(missing, (0, 0), (0, 0), "x"),
            ]
        )
    )
    assert not result.applied
    assert "does not exist" in (result.failure_reason or "")
    assert good.read_text() == "A = 1\n"
    outside = tmp_path.parent / "outside.py"
    refused = ledger.handle(
        types.WorkspaceEdit(document_changes=[types.CreateFile(uri=outside.as_uri())])
    )
    assert not refused.applied
    assert "outside the workspace" in (refused.failure_reason or "")
    assert not outside.exists()


def test_create_rename_delete_and_refusing_after_cancel(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text("OLD = 1\n")
    (tmp_path / "gone.py").write_text("G = 1\n")
    ledger = EditLedger(tmp_path, apply=True)
    new = tmp_path / "pkg" / "new.py"
    result = ledger.handle(
        types.WorkspaceEdit(
            document_changes=[
                types.CreateFile(uri=new.as_uri()),
                _edit(new, (0, 0), (0, 0), "NEW = 1\n"),
                types.RenameFile(
                    old_uri=(tmp_path / "old.py").as_uri(), new_uri=(tmp_path / "moved.py").as_uri()
                ),
                types.DeleteFile(uri=(tmp_path / "gone.py").as_uri()),
            ]
        )
    )
    assert result.applied, result.failure_reason
    assert new.read_text() == "NEW = 1\n"
    assert (tmp_path / "moved.py").read_text() == "OLD = 1\n"
    assert not (tmp_path / "old.py").exists()
    assert not (tmp_path / "gone.py").exists()
    diff = ledger.diff()
    assert "rename from old.py\nrename to moved.py" in diff
    assert "deleted file mode 100644" in diff
    assert "+++ b/pkg/new.py" in diff
    ledger.refusing = "cancelled by the user"
    late = ledger.handle(types.WorkspaceEdit(document_changes=[types.DeleteFile(uri=new.as_uri())]))
    assert not late.applied
    assert late.failure_reason == "cancelled by the user"
    assert new.exists()


def test_diff_marks_a_missing_final_newline(tmp_path: Path) -> None:
    from agentls.headless.edits import FileChange

    text = unified_diff(FileChange(tmp_path / "a", "x\ny", "x\nz"), lambda p: p.name)
    assert text.endswith("-y\n\\ No newline at end of file\n+z\n\\ No newline at end of file\n")
