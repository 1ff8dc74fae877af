"""Download a real-code corpus for the symbol-index benchmark (bench/index_bench.py).

Uses only the package registries, through their ordinary clients: a Django sdist from PyPI
(Python + some JS) and three npm packages (TypeScript's lib .d.ts files, @types/node, and
three.js's ES-module sources). About 4k source files and 1.1 M lines; the two multi-MB
bundles in `typescript/lib` exercise the huge-file skip.

    python bench/fetch_corpus.py [--dest ~/.cache/agentls-bench/corpus]

Idempotent: packages already unpacked are kept. Prints the corpus folder.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

DEFAULT_DEST = Path.home() / ".cache" / "agentls-bench" / "corpus"

PYPI = {"django": "django==5.1.15"}
NPM = {
    "typescript": "typescript@5.9.3",
    "types-node": "@types/node@22.20.7",
    "three": "three@0.170.0",
}
SOURCE_SUFFIXES = {".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx"}


def _unpack(archive: Path, dest: Path) -> None:
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")


def fetch_pypi(name: str, spec: str, dest: Path) -> None:
    target = dest / name
    if target.exists():
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                "--no-binary", ":all:", spec, "-d", tmp,
            ],
            check=True,
        )  # fmt: skip
        (archive,) = Path(tmp).glob("*.tar.gz")
        _unpack(archive, Path(tmp) / "out")
        shutil.move(str(Path(tmp) / "out"), target)


def fetch_npm(name: str, spec: str, dest: Path) -> None:
    target = dest / name
    if target.exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is needed for the npm part of the corpus (apt-get install npm)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([npm, "pack", "--silent", spec], cwd=tmp, check=True, capture_output=True)
        (archive,) = Path(tmp).glob("*.tgz")
        _unpack(archive, Path(tmp) / "out")
        shutil.move(str(Path(tmp) / "out"), target)


def stats(root: Path) -> tuple[int, int]:
    files = lines = 0
    for path in root.rglob("*"):
        if path.suffix in SOURCE_SUFFIXES and path.is_file():
            files += 1
            with path.open("rb") as fh:
                lines += sum(1 for _ in fh)
    return files, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    args = parser.parse_args()
    dest: Path = args.dest.expanduser()
    dest.mkdir(parents=True, exist_ok=True)
    for name, spec in PYPI.items():
        fetch_pypi(name, spec, dest)
    for name, spec in NPM.items():
        fetch_npm(name, spec, dest)
    files, lines = stats(dest)
    print(f"{dest}: {files} source files, {lines:,} lines")


if __name__ == "__main__":
    main()
