"""ChangeSet: condensed per-file staging with bases, renames, discards and listeners."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.workspace import DELETED, Change, ChangeEvent, ChangeSet, MovedFrom

A = Path("/ws/a.py")
B = Path("/ws/b.py")
C = Path("/ws/c.py")


def test_write_records_first_base_only() -> None:
    cs = ChangeSet()
    assert cs.is_empty()
    assert cs.text(A) is None
    cs.stage_write(A, "v1", "orig", 3)
    cs.stage_write(A, "v2", "v1", 9)
    assert cs.text(A) == "v2"
    assert cs.entries() == [Change("modify", A, None, "orig", "v2", 3)]
    assert cs.changed_paths() == [A]


def test_create_then_delete_leaves_nothing() -> None:
    cs = ChangeSet()
    cs.stage_write(A, "new", None)
    assert cs.entries() == [Change("create", A, new_text="new")]
    cs.stage_delete(A)
    assert cs.is_empty()
    assert cs.text(A) is None


def test_edit_back_to_original_is_no_change() -> None:
    cs = ChangeSet()
    cs.stage_write(A, "changed", "orig", 1)
    cs.stage_write(A, "orig", "changed", 1)
    assert cs.is_empty()


def test_delete_existing_and_recreate_is_a_modify() -> None:
    cs = ChangeSet()
    cs.stage_delete(A, "orig", 2)
    assert cs.text(A) is DELETED
    assert cs.entries() == [Change("delete", A, None, "orig", None, 2)]
    cs.stage_write(A, "again", None)
    assert cs.entries() == [Change("modify", A, None, "orig", "again", 2)]


def test_rename_is_lazy_until_edited() -> None:
    cs = ChangeSet()
    cs.stage_rename(A, B, "orig", 5)
    assert cs.text(A) is DELETED
    assert cs.text(B) == MovedFrom(A)
    assert cs.entries() == [Change("rename", B, A, "orig", None, 5)]
    cs.stage_write(B, "edited", "orig")
    assert cs.entries() == [Change("rename", B, A, "orig", "edited", 5)]
    assert cs.changed_paths() == [A, B]


def test_rename_chain_and_rename_back() -> None:
    cs = ChangeSet()
    cs.stage_rename(A, B, "orig")
    cs.stage_rename(B, C)
    assert cs.entries() == [Change("rename", C, A, "orig")]
    cs.stage_rename(C, A)
    assert cs.is_empty()


def test_delete_then_rename_onto_it_orders_delete_first() -> None:
    cs = ChangeSet()
    cs.stage_delete(B, "old b")
    cs.stage_rename(A, B, "a text")
    kinds = [(c.kind, c.path) for c in cs.entries()]
    assert kinds == [("delete", B), ("rename", B)]


def test_deleting_a_renamed_file_deletes_the_original() -> None:
    cs = ChangeSet()
    cs.stage_rename(A, B, "orig")
    cs.stage_delete(B)
    assert cs.entries() == [Change("delete", A, None, "orig")]
    assert cs.text(B) is None


def test_rename_refuses_existing_staged_target() -> None:
    cs = ChangeSet()
    cs.stage_write(B, "b", None)
    with pytest.raises(ValueError, match="already exists in this session"):
        cs.stage_rename(A, B)


def test_discard_restores_whole_changes() -> None:
    cs = ChangeSet()
    cs.stage_write(A, "a2", "a1")
    cs.stage_rename(B, C, "b")
    restored = cs.discard([C])
    assert restored == [B, C]
    assert cs.text(B) is None
    assert cs.text(C) is None
    assert cs.entries() == [Change("modify", A, None, "a1", "a2")]
    cs.discard()
    assert cs.is_empty()


def test_overlay_lists_every_changed_path() -> None:
    cs = ChangeSet()
    cs.stage_write(A, "x", None)
    cs.stage_rename(B, C, "b")
    assert cs.overlay() == {A: "x", B: DELETED, C: MovedFrom(B)}


def test_listeners_hear_each_operation() -> None:
    heard: list[ChangeEvent] = []
    hooked: list[ChangeEvent] = []
    cs = ChangeSet(on_change=hooked.append)
    remove = cs.add_listener(heard.append)
    cs.stage_write(A, "x", None)
    cs.stage_rename(A, B)
    remove()
    cs.stage_delete(B)
    assert heard == [ChangeEvent("write", A), ChangeEvent("rename", A, B)]
    assert [e.kind for e in hooked] == ["write", "rename", "delete"]


def test_failing_listener_does_not_break_staging() -> None:
    def boom(event: ChangeEvent) -> None:
        raise RuntimeError("listener bug")

    cs = ChangeSet(on_change=boom)
    cs.stage_write(A, "x", None)
    assert cs.text(A) == "x"
