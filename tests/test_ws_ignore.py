"""Ignore rules: .gitignore/.ignore (nested), always-skipped folders, no symlink walks."""

from __future__ import annotations

import os
from pathlib import Path

from agentls.workspace import Workspace
from tests.ws_support import make_tree


def listed(ws: Workspace, under: Path | None = None) -> list[str]:
    return sorted(ws.display(p) for p in ws.iter_files(under))


def test_gitignore_and_default_skips(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.log\n/out/\nsecret.txt\n",
            "app.py": "",
            "debug.log": "",
            "out/result.txt": "",
            "src/out/kept.txt": "",
            "src/secret.txt": "",
            "node_modules/pkg/index.js": "",
            ".git/config": "",
            ".venv/lib/x.py": "",
            "venv/pyvenv.cfg": "",
            "venv/lib/y.py": "",
            "lib/venv/__init__.py": "",
            "src/__pycache__/app.cpython-311.pyc": "",
            "dist/bundle.js": "",
            "pkg.egg-info/PKG-INFO": "",
        },
    )
    ws = Workspace([tmp_path])
    assert listed(ws) == [".gitignore", "app.py", "lib/venv/__init__.py", "src/out/kept.txt"]
    assert ws.is_ignored(tmp_path / "debug.log")
    assert ws.is_ignored(tmp_path / "node_modules" / "pkg" / "index.js")
    assert ws.is_ignored(tmp_path / ".git" / "config")
    assert not ws.is_ignored(tmp_path / "app.py")
    assert not ws.is_ignored(tmp_path / "src" / "out" / "kept.txt")


def test_nested_gitignore_and_negation(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.gen.py\n",
            "a.gen.py": "",
            "pkg/.gitignore": "!keep.gen.py\nlocal.txt\n",
            "pkg/keep.gen.py": "",
            "pkg/drop.gen.py": "",
            "pkg/local.txt": "",
            "local.txt": "",
        },
    )
    ws = Workspace([tmp_path])
    assert listed(ws) == [".gitignore", "local.txt", "pkg/.gitignore", "pkg/keep.gen.py"]
    assert ws.is_ignored(tmp_path / "pkg" / "local.txt")
    assert not ws.is_ignored(tmp_path / "local.txt")


def test_dot_ignore_overrides_gitignore(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.snap\n",
            ".ignore": "!important.snap\n",
            "a.snap": "",
            "important.snap": "",
        },
    )
    ws = Workspace([tmp_path])
    assert "important.snap" in listed(ws)
    assert "a.snap" not in listed(ws)


def test_ignored_folder_cannot_reinclude_children(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "gen/\n!gen/keep.txt\n", "gen/keep.txt": ""})
    assert listed(Workspace([tmp_path])) == [".gitignore"]


def test_explicitly_requested_ignored_folder_is_listed(tmp_path: Path) -> None:
    make_tree(tmp_path, {"node_modules/pkg/index.js": "", "node_modules/pkg/.git/HEAD": ""})
    ws = Workspace([tmp_path])
    assert listed(ws) == []
    assert listed(ws, tmp_path / "node_modules" / "pkg") == ["node_modules/pkg/index.js"]


def test_symlinks_are_not_followed(tmp_path: Path) -> None:
    outside = make_tree(tmp_path / "outside", {"x.txt": ""})
    root = make_tree(tmp_path / "root", {"a.txt": ""})
    os.symlink(outside, root / "linked_dir")
    os.symlink(outside / "x.txt", root / "linked_file.txt")
    assert listed(Workspace([root])) == ["a.txt"]


def test_extra_patterns_and_rule_changes_are_picked_up(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.tmp": "", "b.txt": "", "c.txt": ""})
    ws = Workspace([tmp_path], ignore_patterns=["*.tmp"])
    assert listed(ws) == ["b.txt", "c.txt"]
    (tmp_path / ".gitignore").write_text("c.txt\n")
    assert listed(ws) == [".gitignore", "b.txt"]
    (tmp_path / ".gitignore").write_text("b.txt\n# changed\n")
    assert listed(ws) == [".gitignore", "c.txt"]
