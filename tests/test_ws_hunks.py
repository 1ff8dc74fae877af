"""Hunks of a staged changeset (`agentls.workspace.hunks`) and the notes the model gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.persistence.staged import review_note
from agentls.workspace.changes import ChangeSet
from agentls.workspace.hunks import file_hunks, select, text_with

ORIGINAL = "".join(f"line{n} = {n}\n" for n in range(1, 13))
CHANGED = ORIGINAL.replace("line2 = 2", "two = 2").replace("line10 = 10", "ten = 10\nmore = 1")


def _changes(tmp_path: Path) -> ChangeSet:
    changes = ChangeSet()
    changes.stage_write(tmp_path / "b.py", CHANGED, ORIGINAL)
    changes.stage_write(tmp_path / "new.py", "x = 1\n", None)
    return changes


def test_hunks_are_numbered_across_the_changeset(tmp_path: Path) -> None:
    files = file_hunks(_changes(tmp_path).entries())
    ids = [(h.id, h.path.name, h.index, h.kind, h.where()) for f in files for h in f.hunks]
    assert ids == [
        (1, "b.py", 1, "modify", "line 2"),
        (2, "b.py", 2, "modify", "line 10"),
        (3, "new.py", 1, "create", "new file"),
    ]
    assert files[0].hunks[1].diff() == "@@ -10,1 +10,2 @@\n-line10 = 10\n+ten = 10\n+more = 1"


def test_text_with_applies_only_the_chosen_hunks(tmp_path: Path) -> None:
    change = _changes(tmp_path).entries()[0]
    assert text_with(change, [1]) == ORIGINAL.replace("line2 = 2", "two = 2")
    assert text_with(change, [1, 2]) == CHANGED
    assert text_with(change, []) == ORIGINAL


def test_select_splits_whole_and_partial_files_and_refuses_unknown_ids(tmp_path: Path) -> None:
    entries = _changes(tmp_path).entries()
    picked = select(entries, [2, 3])
    assert [f.change.path.name for f in picked.whole] == ["new.py"]
    assert [(f.change.path.name, [h.index for h in hs]) for f, hs in picked.partial] == [
        ("b.py", [2])
    ]
    with pytest.raises(ValueError, match="no staged hunk 4, 9"):
        select(entries, [1, 4, 9])


def test_rebase_keeps_the_rest_staged_and_drops_a_finished_change(tmp_path: Path) -> None:
    changes = _changes(tmp_path)
    path = tmp_path / "b.py"
    change = changes.entries()[0]
    changes.rebase(path, text_with(change, [1]))
    left = file_hunks(changes.entries())[0]
    assert [h.where() for h in left.hunks] == ["line 10"]
    changes.rebase(path, CHANGED)
    assert [c.path.name for c in changes.entries()] == ["new.py"]
    with pytest.raises(ValueError, match="no staged modification"):
        changes.rebase(tmp_path / "new.py", "y")


def test_the_note_names_hunk_file_lines_and_reason(tmp_path: Path) -> None:
    hunks = file_hunks(_changes(tmp_path).entries())[0].hunks
    note = review_note("rejected", [hunks[1]], "callers use line10", lambda p: p.name)
    assert "The user rejected hunk 2 of b.py (line 10): callers use line10." in note
    bare = review_note("rejected", [hunks[0]], None, lambda p: p.name)
    assert "hunk 1 of b.py (line 2) (no reason given)" in bare


def test_acp_parse_reads_numbers_then_the_reason() -> None:
    from agentls.acp.hunks import parse

    assert parse(" 2, 3 too risky") == ([2, 3], "too risky")
    assert parse(" 1") == ([1], None)
    assert parse("") == ([], None)
    assert parse(" all of them") == ([], None)


def test_rewind_reverses_applied_changes_one_by_one_after_a_reload(tmp_path: Path) -> None:
    """Two applied changes to one file, saved and loaded: rewinding past the second only
    stages its own reverse (B ← C), not the pair merged (A ← C)."""
    from agentls.agent.persistence.rewind import reverse
    from agentls.agent.persistence.staged import change_of, snapshot_entries
    from agentls.workspace.changes import Change

    path = tmp_path / "v.py"
    applied = [
        Change("modify", path, None, "A\n", "B\n"),
        Change("modify", path, None, "B\n", "C\n"),
    ]
    loaded = [change_of(e) for e in snapshot_entries(applied)]
    assert loaded == applied
    into = ChangeSet()
    reverse(loaded[1:], into)
    (change,) = into.entries()
    assert (change.original_text, change.new_text) == ("C\n", "B\n")
