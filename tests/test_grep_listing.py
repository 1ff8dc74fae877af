"""grep starts ripgrep on the file list of the previous search while it lists the files
again (`run_search_listing`): whatever changed in between, its answer is exactly the answer
of a workspace that never searched before. Checked with random changes to the tree (files
added, deleted, renamed, ignore rules written, folders swapped for files, symlinks, secret
files) in one root and in two, with staged edits, in every output mode."""

from __future__ import annotations

import contextlib
import random
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.workspace import ChangeSet, Workspace
from tests.test_ws_walk_cache import _MUTATIONS, Tree, _a_dir
from tests.ws_support import Runner, make_ctx, make_tree

SEARCHES: list[dict[str, Any]] = [
    {"pattern": "x|needle", "output": "files"},
    {"pattern": "x|needle", "output": "count"},
    {"pattern": "needle"},
    {"pattern": "x", "glob": "*.py"},
    {"pattern": "zzz_never"},
]

SECRET_NAMES = [".env", ".env.local", "id_rsa", "server.pem", ".env.example"]


def _secret_file(rng: random.Random, root: Path) -> None:
    path = _a_dir(rng, root) / rng.choice(SECRET_NAMES)
    if not path.exists() and not path.is_symlink():
        path.write_text("needle x = 'secret'\n")


def _needle(rng: random.Random, root: Path) -> None:
    path = _a_dir(rng, root) / f"needle_{rng.randint(0, 9)}.py"
    if not path.is_symlink() and not path.is_dir():
        path.write_text("needle = 'x'\n" * rng.randint(1, 3))


MUTATIONS = [*_MUTATIONS, _secret_file, _needle, _needle]


async def answers(runner: Runner) -> list[str]:
    return [await runner.ok("grep", **search) for search in SEARCHES]


def ctx_for(roots: list[Path], changes: ChangeSet) -> ToolContext:
    return ToolContext(session_id="test", workspace=Workspace(roots), changes=changes)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("two_roots", [False, True])
async def test_every_answer_is_that_of_a_fresh_workspace(
    tmp_path: Path, seed: int, two_roots: bool
) -> None:
    rng = random.Random(seed)
    tree = Tree(
        tmp_path / "ws",
        {
            "a/b/c.py": "x = 1\n",
            "a/d.log": "needle\n",
            "e.md": "x\n",
            ".gitignore": "",
            "other/f.py": "needle x\n",
        },
    )
    tree.settle()
    roots = [tree.root / "a", tree.root / "other"] if two_roots else [tree.root]
    changes = ChangeSet()
    searched = Runner(ctx_for(roots, changes))
    await answers(searched)
    for step in range(25):
        for mutate in rng.choices(MUTATIONS, k=rng.randint(1, 3)):
            mutate(rng, tree.root)
        for root in roots:  # a root stays a folder (a mutation may have replaced it)
            if root.is_symlink() or root.is_file():
                root.unlink()
            root.mkdir(parents=True, exist_ok=True)
        if rng.random() < 0.2:  # a staged edit and a staged deletion, like an agent's
            changes.stage_write(tree.root / "other" / f"staged_{step}.py", "needle x\n", None)
            existing = sorted(p for p in tree.root.rglob("*.py") if p.is_file())
            if existing:
                with contextlib.suppress(ValueError):  # already deleted
                    changes.stage_delete(rng.choice(existing))
        if rng.random() < 0.7:
            tree.settle()
        fresh = Runner(ctx_for(roots, changes))
        assert await answers(searched) == await answers(fresh), step


async def test_a_new_file_is_found_and_a_deleted_one_is_not(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "ws", {"a.py": "needle\n", "b.py": "nothing\n"})
    run = Runner(make_ctx(root))
    assert "a.py:1" in await run.ok("grep", pattern="needle")
    make_tree(root, {"c.py": "needle too\n"})
    (root / "a.py").unlink()
    out = await run.ok("grep", pattern="needle")
    assert "c.py:1" in out
    assert "a.py" not in out
    (root / "c.py").unlink()
    assert "in 1 file in the workspace" in await run.ok("grep", pattern="needle")


async def test_a_file_that_became_secret_is_not_searched(tmp_path: Path) -> None:
    from agentls.workspace.secrets import SecretMatcher

    root = make_tree(tmp_path / "ws", {"config.yaml": "token: needle\n", "a.py": "x\n"})
    ctx = make_ctx(root)
    run = Runner(ctx)
    assert "config.yaml:1" in await run.ok("grep", pattern="needle")
    ctx.workspace.services.secrets = SecretMatcher(patterns=["config.yaml"], roots=[root])
    assert "No matches" in await run.ok("grep", pattern="needle")


async def test_count_mode_skips_binary_files_within_the_limit(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {}
    for i in range(12):
        name = f"f{i:02d}"
        if i % 3 == 1:  # a NUL in the head: binary
            files[f"{name}.bin"] = b"needle\n\x00needle\n"
        else:
            files[f"{name}.txt"] = "needle\n" * (i + 1)
    root = make_tree(tmp_path / "ws", files)
    run = Runner(make_ctx(root))
    out = await run.ok("grep", pattern="needle", output="count", max_results=3)
    assert out.splitlines() == [
        "f00.txt:1",
        "f02.txt:3",
        "f03.txt:4",
        "[8 matching lines in 3 files]",
        "[showing the first 3 files; more matches exist. Narrow the search with `path` or "
        "`glob`, or raise `max_results`]",
    ]
    everything = await run.ok("grep", pattern="needle", output="count")
    assert ".bin" not in everything
    assert "[52 matching lines in 8 files]" in everything
