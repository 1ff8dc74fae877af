"""Real Claude Code artefacts, unchanged, for tests that load them.

The repositories are never committed: they are read from the fetched mirrors
(`/work/.mirror/<owner>+<name>/repo`, git folders without a work tree) or from
`AGENTLS_ARTEFACTS` (a folder holding `<owner>+<name>/` checkouts or git folders), exported
file by file into a temporary folder. A test that needs one skips with the reason when it is
absent. Blobs a mirror does not hold (large binaries) are left out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

MIRROR = Path("/work/.mirror")


def _source(repo: str) -> Path | None:
    name = repo.replace("/", "+")
    bases = [Path(p) for p in os.environ.get("AGENTLS_ARTEFACTS", "").split(os.pathsep) if p]
    for base in [*bases, MIRROR]:
        for candidate in (base / name / "repo", base / name):
            if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
                return candidate
            if candidate.is_dir() and any(candidate.iterdir()):
                return candidate
    return None


def export(repo: str, dest: Path) -> Path:
    """`repo` (`owner/name`) as plain files under `dest`; skips the test when absent."""
    source = _source(repo)
    if source is None:
        pytest.skip(
            f"{repo} is not fetched (expected {MIRROR}/{repo.replace('/', '+')}/repo or "
            "AGENTLS_ARTEFACTS); fetch it to run this test"
        )
    if not (source / "HEAD").is_file():
        shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        return dest
    _export_git(source, dest)
    return dest


def _export_git(git_dir: Path, dest: Path) -> None:
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "HEAD"],
        capture_output=True,
        check=True,
    ).stdout
    entries = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, path = record.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode != b"120000":
            entries.append((mode, sha, path.decode()))
    with subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    ) as batch:
        assert batch.stdin is not None
        assert batch.stdout is not None
        for mode, sha, path in entries:
            batch.stdin.write(sha + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if header[-1] == b"missing":
                continue
            data = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if mode == b"100755":
                target.chmod(0o755)
        batch.stdin.close()


class Artefacts:
    """Exported repositories, each exported once per test run."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory
        self._done: dict[str, Path] = {}

    def __call__(self, repo: str) -> Path:
        if repo not in self._done:
            self._done[repo] = export(repo, self._factory.mktemp(repo.replace("/", "+")))
        return self._done[repo]
