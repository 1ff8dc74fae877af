"""Where `scripts/deps/langservers.sh` put the registry's servers, and a small fixture per
server: a definition, its references across files, and a file with an error.

Positions are 1-based lines and 0-based characters of the first file's query word.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTALL = "run `bash scripts/deps/langservers.sh` (or `bash scripts/test-deps.sh`)"


def tools_dir() -> Path:
    return Path(os.environ.get("AGENTLS_TOOLS_DIR") or Path.home() / ".cache" / "agentls-tools")


def npm_bin() -> Path:
    here = ROOT / "scripts" / "deps" / "langservers"
    data = (here / "package.json").read_bytes() + (here / "package-lock.json").read_bytes()
    return tools_dir() / f"langservers-{hashlib.sha256(data).hexdigest()[:12]}/node_modules/.bin"


def pypi_bin() -> Path:
    lock = (ROOT / "requirements" / "langservers.lock").read_bytes()
    return tools_dir() / f"langservers-py-{hashlib.sha256(lock).hexdigest()[:12]}" / "bin"


def find_server(executable: str) -> Path | None:
    """The installed server: the npm folder, the PyPI virtualenv, then PATH (Debian's)."""
    for folder in (npm_bin(), pypi_bin()):
        if (folder / executable).exists():
            return folder / executable
    found = shutil.which(executable)
    return Path(found) if found else None


@dataclass(frozen=True)
class Case:
    server: str
    """The registry name."""
    language: str
    files: dict[str, str]
    query: tuple[str, int, str]
    """(file, 1-based line, word) whose definition and references are asked."""
    definition: tuple[str, int]
    """(file, 1-based line) the definition must be on."""
    references: frozenset[tuple[str, int]]
    """(file, line) pairs every answer must include."""
    broken: str
    """The file with an error the diagnostics must report."""
    unsupported: frozenset[str] = frozenset()
    """Operations the server does not offer: "definition", "references", "diagnostics"."""
    trusted: bool = False
    """Held-back servers only start in a trusted workspace."""
    links: tuple[str, ...] = ()
    """npm packages of the test install linked into the fixture's node_modules."""


PY = {
    "lib.py": "def greet(name):\n    return name\n",
    "main.py": "from lib import greet\n\ngreet('a')\ngreet('b')\n",
    "bad.py": "import os\n\ndef broken(:\n    pass\n",
}
PY_REFS = frozenset({("main.py", 3), ("main.py", 4)})


def _python(server: str, **more: object) -> Case:
    return Case(
        server, "python", PY, ("main.py", 3, "greet"), ("lib.py", 1), PY_REFS, "bad.py", **more
    )  # type: ignore[arg-type]


TS = {
    "tsconfig.json": '{"compilerOptions": {"strict": true}}\n',
    "lib.ts": "export function greet(name: string): string {\n  return name;\n}\n",
    "main.ts": 'import { greet } from "./lib";\n\ngreet("a");\ngreet("b");\n',
    "bad.ts": "const n: number = 'text';\n",
}

CASES: tuple[Case, ...] = (
    _python("basedpyright"),
    _python("pyright"),
    _python("pylsp", trusted=True),
    _python("jedi-language-server", trusted=True),
    _python("ruff", unsupported=frozenset({"definition", "references"})),
    Case(
        "typescript-language-server",
        "typescript",
        TS,
        ("main.ts", 3, "greet"),
        ("lib.ts", 1),
        frozenset({("main.ts", 3), ("main.ts", 4)}),
        "bad.ts",
    ),
    Case(
        "vue-language-server",
        "vue",
        {
            "tsconfig.json": '{"compilerOptions": {"strict": true}}\n',
            "App.vue": '<script setup lang="ts">\nfunction greet(name: string) {\n'
            "  return name;\n}\ngreet('a');\ngreet('b');\n</script>\n",
            "Bad.vue": "<template>\n  <div>\n</template>\n",
        },
        ("App.vue", 5, "greet"),
        ("App.vue", 2),
        frozenset({("App.vue", 5), ("App.vue", 6)}),
        "Bad.vue",
    ),
    Case(
        "svelte-language-server",
        "svelte",
        {
            "App.svelte": '<script lang="ts">\n  function greet(name: string) {\n'
            "    return name;\n  }\n  greet('a');\n  greet('b');\n</script>\n",
            "Bad.svelte": "<script>\n  let = ;\n</script>\n",
        },
        ("App.svelte", 5, "greet"),
        ("App.svelte", 2),
        frozenset({("App.svelte", 5), ("App.svelte", 6)}),
        "Bad.svelte",
        trusted=True,
    ),
    Case(
        "tailwindcss-language-server",
        "html",
        {
            "tailwind.config.js": "module.exports = { content: ['./*.html'] };\n",
            "index.html": '<div class="p-1 p-2">text</div>\n',
        },
        ("index.html", 1, "p-1"),
        ("index.html", 1),
        frozenset(),
        "index.html",
        unsupported=frozenset({"definition", "references"}),
        trusted=True,
        links=("tailwindcss",),
    ),
    Case(
        "bash-language-server",
        "bash",
        {
            "lib.sh": 'greet() {\n  echo "$1"\n}\n',
            "main.sh": "source ./lib.sh\ngreet a\ngreet b\n",
            "bad.sh": "if then\nfi\n",
        },
        ("main.sh", 2, "greet"),
        ("lib.sh", 1),
        frozenset({("main.sh", 2), ("main.sh", 3)}),
        "bad.sh",
    ),
    Case(
        "yaml-language-server",
        "yaml",
        {
            "config.yaml": "base: &base\n  name: a\nfirst: *base\nsecond: *base\n",
            "bad.yaml": "key: [unclosed\n  other: : :\n",
        },
        ("config.yaml", 3, "base"),
        ("config.yaml", 2),  # the anchored node
        frozenset(),
        "bad.yaml",
        unsupported=frozenset({"references"}),
    ),
    Case(
        "vscode-css-language-server",
        "css",
        {
            "style.css": ":root {\n  --accent: red;\n}\na { color: var(--accent); }\n"
            "b { color: var(--accent); }\n",
            "bad.css": "a { color red; }\n",
        },
        ("style.css", 4, "--accent"),
        ("style.css", 2),
        frozenset({("style.css", 4), ("style.css", 5)}),
        "bad.css",
    ),
    Case(
        "vscode-json-language-server",
        "json",
        {
            "data.json": '{\n  "a": 1,\n  "b": 2\n}\n',
            "bad.json": '{\n  "a": 1,,\n}\n',
        },
        ("data.json", 2, "a"),
        ("data.json", 2),
        frozenset(),
        "bad.json",
        unsupported=frozenset({"definition", "references"}),
    ),
    Case(
        "vscode-html-language-server",
        "html",
        {"index.html": '<html>\n<body>\n<p id="a">text</p>\n</body>\n</html>\n'},
        ("index.html", 3, "p"),
        ("index.html", 3),
        frozenset(),
        "index.html",
        unsupported=frozenset({"definition", "references", "diagnostics"}),
    ),
    Case(
        "docker-langserver",
        "dockerfile",
        {
            "Dockerfile": "FROM debian\nARG VERSION=1\nRUN echo $VERSION\nRUN echo $VERSION\n",
            "bad.dockerfile": "FROM debian\nEXPOSE notaport\n",
        },
        ("Dockerfile", 3, "VERSION"),
        ("Dockerfile", 2),
        frozenset(),
        "bad.dockerfile",
        unsupported=frozenset({"references"}),
    ),
    Case(
        "intelephense",
        "php",
        {
            "lib.php": "<?php\nfunction greet($name) {\n    return $name;\n}\n",
            "main.php": "<?php\nrequire 'lib.php';\ngreet('a');\ngreet('b');\n",
            "bad.php": "<?php\nfunction (\n",
        },
        ("main.php", 3, "greet"),
        ("lib.php", 2),
        frozenset({("main.php", 3), ("main.php", 4)}),
        "bad.php",
    ),
    Case(
        "fortls",
        "fortran",
        {
            "lib.f90": "module lib\ncontains\n  subroutine greet(n)\n    integer :: n\n"
            "  end subroutine greet\nend module lib\n",
            "main.f90": "program main\n  use lib\n  call greet(1)\n  call greet(2)\n"
            "end program main\n",
            "bad.f90": "program bad\n  integer :: x\n  integer :: x\nend program bad\n",
        },
        ("main.f90", 3, "greet"),
        ("lib.f90", 3),
        frozenset({("main.f90", 3), ("main.f90", 4)}),
        "bad.f90",
    ),
    Case(
        "cmake-language-server",
        "cmake",
        {"CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(demo)\n"},
        ("CMakeLists.txt", 2, "project"),
        ("CMakeLists.txt", 2),
        frozenset(),
        "CMakeLists.txt",
        unsupported=frozenset({"definition", "references", "diagnostics"}),
    ),
    Case(
        "clangd",
        "c",
        {
            "lib.h": "int greet(int n);\n",
            "lib.c": '#include "lib.h"\nint greet(int n) { return n; }\n',
            "main.c": '#include "lib.h"\nint main(void) {\n  greet(1);\n  return greet(2);\n}\n',
            "bad.c": "int main(void) { return missing; }\n",
            "compile_flags.txt": "-I.\n",
        },
        ("main.c", 3, "greet"),
        ("lib.h", 1),
        frozenset({("main.c", 3), ("main.c", 4)}),
        "bad.c",
    ),
    Case(
        "gopls",
        "go",
        {
            "go.mod": "module example.com/demo\n\ngo 1.19\n",
            "lib.go": "package main\n\nfunc greet(n string) string {\n\treturn n\n}\n",
            "main.go": 'package main\n\nfunc main() {\n\tgreet("a")\n\tgreet("b")\n}\n',
            "bad/bad.go": 'package bad\n\nfunc f() int {\n\treturn "s"\n}\n',
        },
        ("main.go", 4, "greet"),
        ("lib.go", 3),
        frozenset({("main.go", 4), ("main.go", 5)}),
        "bad/bad.go",
    ),
)
