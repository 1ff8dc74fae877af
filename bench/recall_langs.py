"""TypeScript and Go: what `find_references` reports to the model against `rg -w` (issue 31).

The Django figures come from `django_recall.py`; this script measures the same thing, scored
by the same code, on a TypeScript package (zod, its `packages/zod`, through
typescript-language-server) and a Go module (google/uuid, through gopls), 10 frequently called
functions or methods each, from their definition line, through `agentls serve`. (spf13/cobra
was the first Go choice, but its dependencies are not in this machine's module cache, and
gopls, offline, then has no package metadata: the tool fell back to the index.)

- recall reported to the model (confirmed + unconfirmed; these languages are typed, so the
  tool adds no unconfirmed matches) against the lines `rg` finds with `name(` in the
  language's files, and against those that are code (the index's tree-sitter scan finds
  `name` there as an identifier: comments and strings left out);
- precision of the confirmed part: confirmed lines on which `rg -w name` matches at all.

`rg` counts every function of that name: where a project defines the name more than once
(zod's classic and mini APIs, v3 and v4, `JSON.parse`), the misses include calls of the
other definitions, which the server rightly leaves out; `DJANGO_RECALL_MISSES=N` prints the
first N misses per method to tell them apart.

Corpora: unpack the repositories at these commits (e.g. `git archive HEAD packages/zod
.configs package.json tsconfig.json | tar -x -C …/corpus/zod`; `git archive HEAD | tar -x -C
…/corpus/uuid`):
    ~/.cache/agentls-bench/corpus/zod/packages/zod   (colinhacks/zod e516c3b)
    ~/.cache/agentls-bench/corpus/uuid               (google/uuid 2d3c2a9)

    python bench/recall_langs.py [--only typescript|go] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentls.codeintel.identifiers import occurrences
from agentls.headless.client import ServerConnection
from code_intel_bench import CACHE, Target, agentls_split
from conditions import Conditions, tool_version
from django_recall import MISSES, rg_lines, score, summarize

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Project:
    language: str
    """The `languageServers` key."""
    kind: str
    """ripgrep's file type."""
    server: str
    """The name the tool gives as the answer's source."""
    command: list[str]
    root: Path
    definition: str
    """rg pattern of a definition line, `{name}` for the name."""
    methods: list[tuple[str, str]]
    """(file the definition is in, name)."""
    others: tuple[str, ...] = ()
    """Folders of other APIs that define the same names (their calls are not references)."""


def typescript_server() -> Path:
    """The cached typescript-language-server of `scripts/deps/codeintel.sh` (as the tests)."""
    deps = ROOT / "scripts" / "deps" / "codeintel"
    data = (deps / "package.json").read_bytes() + (deps / "package-lock.json").read_bytes()
    key = hashlib.sha256(data).hexdigest()[:12]
    tools = Path(os.environ.get("AGENTLS_TOOLS_DIR") or Path.home() / ".cache" / "agentls-tools")
    found = tools / f"codeintel-{key}" / "node_modules" / ".bin" / "typescript-language-server"
    if not found.exists():
        raise SystemExit(f"{found} is missing: run `bash scripts/deps/codeintel.sh`")
    return found


def projects() -> dict[str, Project]:
    corpus = CACHE / "corpus"
    classic = "v4/classic/schemas.ts"
    return {
        "typescript": Project(
            "typescript",
            "ts",
            "typescript-language-server",
            [str(typescript_server()), "--stdio"],
            corpus / "zod" / "packages" / "zod",
            r"^\s*(export\s+)?function\s+{name}\b|^\s+{name}\s*[(<]",
            [
                (f"src/{classic}", n)
                for n in (
                    "safeParse",
                    "parseAsync",
                    "safeParseAsync",
                    "optional",
                    "nullable",
                    "refine",
                    "superRefine",
                    "extend",
                    "discriminatedUnion",
                    "literal",
                )
            ],
            ("src/v3/", "src/v4/mini/", "src/v4/core/", "src/v4-mini/"),
        ),
        "go": Project(
            "go",
            "go",
            "gopls",
            ["gopls"],
            corpus / "uuid",
            r"^func\s+(\([^)]*\)\s*)?{name}\(",
            [
                ("version4.go", "New"),
                ("uuid.go", "Parse"),
                ("uuid.go", "MustParse"),
                ("version4.go", "NewRandom"),
                ("uuid.go", "Must"),
                ("version1.go", "NewUUID"),
                ("version7.go", "NewV7"),
                ("uuid.go", "SetRand"),
                ("uuid.go", "ParseBytes"),
                ("uuid.go", "EnableRandPool"),
            ],
        ),
    }


def targets(project: Project) -> list[Target]:
    chosen: list[Target] = []
    for rel, name in project.methods:
        pattern = project.definition.replace("{name}", name)
        out = subprocess.run(
            ["rg", "-n", "--no-heading", "-e", pattern, rel],
            cwd=project.root,
            capture_output=True,
            text=True,
            check=True,
        )
        number = int(out.stdout.split(":", 1)[0])
        chosen.append(Target(name, Path(rel), number, set(), set()))
    return chosen


def code_lines(root: Path, lines: set[tuple[str, int]], name: str) -> set[tuple[str, int]]:
    """Of `lines`, those where the index's tree-sitter scan finds `name` as an identifier."""
    found: set[tuple[str, int]] = set()
    for rel in {rel for rel, _ in lines}:
        data = (root / rel).read_bytes()
        found.update((rel, span.start.line + 1) for span in occurrences(rel, data, name))
    return found & lines


async def measure(project: Project) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    env["XDG_CACHE_HOME"] = str(CACHE / "xdg")
    env["AGENTLS_TRANSCRIPT_DIR"] = str(CACHE / "transcripts")
    # the server is found on PATH: initialization options are no settings (the server reads
    # only its editor-query announcement from them), so no `languageServers` there
    env["PATH"] = f"{Path(project.command[0]).parent}{os.pathsep}{env.get('PATH', '')}"
    rows: list[dict[str, Any]] = []
    root = project.root
    async with ServerConnection(root, env=env) as conn:
        for target in targets(project):
            answer = await agentls_split(conn, target, project.server)
            calls = rg_lines(root, target.name, calls_only=True, kind=project.kind)
            code = code_lines(root, calls, target.name)
            rows.append(score(root, target, answer, code, project.kind))
            own = {line for line in code if not line[0].startswith(project.others)}
            rows[-1]["own_code_call_lines"] = len(own)
            rows[-1]["found_own_code_calls"] = len(own & (answer[0] | answer[1]))
            for rel, number in (
                sorted(own - answer[0] - answer[1])[:MISSES] if project.others else ()
            ):
                text = (root / rel).read_text(encoding="utf-8").splitlines()[number - 1]
                print(f"   missed (own API) {rel}:{number}: {text.strip()[:100]}", flush=True)
    return rows


def own_recall(project: Project, rows: list[dict[str, Any]]) -> None:
    """Recall on code calls outside the folders of the other APIs of the same names."""
    if not project.others:
        return
    own = sum(r["own_code_call_lines"] for r in rows)
    found = sum(r["found_own_code_calls"] for r in rows)
    print(
        f"recall on code call lines outside {', '.join(project.others)} (other APIs that "
        f"define these names): {found}/{own} = {found / max(own, 1):.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", choices=["typescript", "go"])
    parser.add_argument("--json", type=Path, help="one file per language: out.<language>.json")
    args = parser.parse_args()
    cond = Conditions.start()
    for name, project in projects().items():
        if args.only and name != args.only:
            continue
        flag = "version" if name == "go" else "--version"
        print(f"== {name}: {project.root} ({tool_version([project.command[0], flag])})")
        rows = asyncio.run(measure(project))
        cond.sample()
        out = args.json.with_suffix(f".{name}.json") if args.json else None
        summarize(rows, out)
        own_recall(project, rows)
    print(cond.report())


if __name__ == "__main__":
    main()
