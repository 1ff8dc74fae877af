"""Detection and planning on project trees (files only, nothing runs): which tools, for which
files, and why; the first match wins per role; settings override detection per file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentls.agent.framework.tool import ToolError
from agentls.tools.checks.commands import CheckCommand
from agentls.tools.checks.plan import Planner
from agentls.tools.checks.projects import ProjectIndex
from agentls.tools.checks.settings import LintEntry, TestEntry
from agentls.tools.checks.targets import parse_target, target_args


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _planner(
    root: Path, lint: tuple[LintEntry, ...] = (), tests: tuple[TestEntry, ...] = ()
) -> Planner:
    files = [p for p in root.rglob("*") if p.is_file()]
    return Planner(ProjectIndex([root], files), lint, tests)


def _tools(commands: list[CheckCommand]) -> list[str]:
    return [c.tool for c in commands]


def _package(**sections: object) -> str:
    return json.dumps({"name": "x", **sections})


def test_eslint_wins_over_biome_and_tsc_checks_types(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "package.json": _package(devDependencies={"eslint": "9", "vitest": "3", "jest": "29"}),
            "pnpm-lock.yaml": "",
            "eslint.config.js": "export default []",
            "biome.json": "{}",
            "tsconfig.json": "{}",
            "src/a.ts": "",
            "src/b.js": "",
        },
    )
    plan = _planner(root).lint([root / "src/a.ts", root / "src/b.js"])
    runs = {c.tool: sorted(p.name for p in paths) for c, paths in plan.runs.items()}
    assert runs == {"eslint": ["a.ts", "b.js"], "tsc": ["a.ts"]}
    eslint = next(c for c in plan.runs if c.tool == "eslint")
    assert eslint.install == "pnpm install --frozen-lockfile (pnpm-lock.yaml)"
    assert "biome.json is also present; eslint is the linter (first match)" in plan.notes
    [tests] = _planner(root).tests(None)
    assert tests.tool == "vitest"
    assert "--reporter=json" in tests.argv
    assert (
        "jest also in package.json; vitest runs"
        in _planner(root).detection("node", _planner(root).index.project(root)).notes
    )


def test_legacy_eslint_and_biome_alone(tmp_path: Path) -> None:
    legacy = _tree(
        tmp_path / "legacy", {"package.json": _package(), ".eslintrc.json": "{}", "a.js": ""}
    )
    [eslint] = _planner(legacy).lint([legacy / "a.js"]).runs
    assert eslint.env == {"ESLINT_USE_FLAT_CONFIG": "false"}
    biome = _tree(tmp_path / "biome", {"package.json": _package(), "biome.jsonc": "{}", "a.js": ""})
    [linter] = _planner(biome).lint([biome / "a.js"]).runs
    assert (linter.tool, linter.format) == ("biome", "biome-json")


def test_test_script_when_no_runner_and_yarn_from_its_lock(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {"package.json": _package(scripts={"test": "node --test"}), "yarn.lock": "", "a.js": ""},
    )
    [suite] = _planner(root).tests(None)
    assert (suite.argv[:2], suite.format) == (("yarn", "test"), "raw")
    assert "plain text" in suite.why
    npm_default = _tree(
        tmp_path / "b",
        {"package.json": _package(scripts={"test": 'echo "Error: no test specified" && exit 1'})},
    )
    assert _planner(npm_default).tests(None) == []


def test_vitest_keeps_the_options_of_a_plain_test_script(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "package.json": _package(
                devDependencies={"vitest": "3"}, scripts={"test": "vitest --dir src --watch"}
            )
        },
    )
    [suite] = _planner(root).tests(None)
    assert suite.argv[:4] == ("vitest", "run", "--dir", "src")
    assert "--watch" not in suite.argv


def test_files_without_a_linter_are_listed_with_the_reason(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"package.json": _package(), "a.ts": "", "notes.txt": "", "x.go": ""})
    plan = _planner(root).lint([root / "a.ts", root / "notes.txt", root / "x.go"])
    assert plan.runs == {}
    assert "no eslint config" in plan.unchecked[".ts"][0]
    assert "add a `lint` setting" in plan.unchecked[".txt"][0]
    assert "no go.mod" in plan.unchecked[".go"][0]


def test_python_tools_from_configuration(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "pyproject.toml": "[tool.mypy]\nstrict = 1\n[tool.basedpyright]\n[tool.pylint.main]\n",
            "app.py": "",
        },
    )
    plan = _planner(root).lint([root / "app.py"])
    assert _tools(list(plan.runs)) == ["ruff", "mypy", "basedpyright", "pylint"]
    plain = _tree(tmp_path / "plain", {"app.py": ""})  # no project file: ruff's defaults
    [ruff] = _planner(plain).lint([plain / "app.py"]).runs
    assert ruff.why == "ruff is the default linter for Python"


def test_pytest_when_configured_else_unittest_without_it(tmp_path: Path) -> None:
    venv = tmp_path / "p" / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr\n")
    (venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    root = _tree(tmp_path / "p", {"pyproject.toml": "[project]\nname='p'\n", "test_a.py": ""})
    [suite] = _planner(root).tests(None)
    assert suite.tool == "unittest"
    assert "neither configured nor installed in .venv/" in suite.why
    (root / "conftest.py").write_text("")
    [suite] = _planner(root).tests(None)
    assert suite.tool == "pytest"
    assert suite.install == ".venv/bin/pip install pytest"


def test_go_rust_ruby(tmp_path: Path) -> None:
    go = _tree(tmp_path / "go", {"go.mod": "module example.com/x\n", "a.go": ""})
    assert _tools(list(_planner(go).lint([go / "a.go"]).runs)) == ["go vet", "gofmt"]
    rust = _tree(tmp_path / "rs", {"Cargo.toml": "[package]\nname='x'\n", "src/lib.rs": ""})
    [clippy] = _planner(rust).lint([rust / "src/lib.rs"]).runs
    assert clippy.fallback is not None
    assert clippy.fallback.tool == "cargo check"
    assert clippy.env["CARGO_TARGET_DIR"] == "{cargo_target}"
    ruby = _tree(
        tmp_path / "rb",
        {
            "Gemfile": "gem 'rubocop'\n",
            "Gemfile.lock": "rubocop (1.60)\nrspec-core (3.12)\n",
            "a.rb": "",
        },
    )
    [rubocop] = _planner(ruby).lint([ruby / "a.rb"]).runs
    assert rubocop.argv[:3] == ("bundle", "exec", "rubocop")
    assert rubocop.install == "bundle install"
    [rspec] = _planner(ruby).tests(None)
    assert rspec.argv[:3] == ("bundle", "exec", "rspec")
    assert rspec.format == "rspec-json"


def test_a_monorepo_checks_each_file_with_its_nearest_project(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "web/package.json": _package(devDependencies={"jest": "29"}),
            "web/eslint.config.mjs": "",
            "web/src/a.ts": "",
            "api/go.mod": "module example.com/api\n",
            "api/main.go": "",
            "tools/gen.py": "",
        },
    )
    planner = _planner(root)
    plan = planner.lint([root / "web/src/a.ts", root / "api/main.go", root / "tools/gen.py"])
    assert {(c.tool, c.project.name) for c in plan.runs} == {
        ("eslint", "web"),
        ("go vet", "api"),
        ("gofmt", "api"),
        ("ruff", root.name),
    }
    suites = {(c.tool, c.project.name) for c in planner.tests(None)}
    assert suites == {("jest", "web"), ("go test", "api"), ("pytest", root.name)}
    assert {(c.tool, c.project.name) for c in planner.tests(root / "web/src/a.ts")} == {
        ("jest", "web")
    }
    assert {c.tool for c in planner.tests(root / "api")} == {"go test"}


def test_settings_override_detection_for_what_they_cover(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"pyproject.toml": "", "a.py": "", "gen/b.py": "", "q.sql": ""})
    sql = LintEntry(command=("sqlfluff", "lint", "{paths}"), languages=("sql",))
    gen = LintEntry(command=("mylint", "{paths}"), globs=("gen/**",))
    plan = _planner(root, lint=(sql, gen)).lint([root / "a.py", root / "gen/b.py", root / "q.sql"])
    runs = {c.tool: [p.name for p in paths] for c, paths in plan.runs.items()}
    assert runs == {"ruff": ["a.py"], "mylint": ["b.py"], "sqlfluff": ["q.sql"]}
    catch_all = TestEntry(command=("make", "test"))
    assert _tools(_planner(root, tests=(catch_all,)).tests(None)) == ["make"]


def test_targets_in_each_runners_syntax(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {"calc/calc_test.go": "", "tests/it.rs": "", "t/a.test.ts": "", "tests/test_x.py": ""},
    )

    def args(style: str, target: str | None, program: str = "x") -> list[str]:
        command = CheckCommand(
            kind="tests", tool=style, argv=(program,), format="raw", project=root, targets=style
        )  # type: ignore[arg-type]
        parsed = parse_target(target, root, lambda raw: (root / raw).resolve(), Path.exists)
        return target_args(command, parsed)

    assert args("go", None) == ["./..."]
    assert args("go", "calc::TestAdd/empty") == ["./calc", "-run", "^TestAdd$/^empty$"]
    assert args("go", "Login") == ["-run", "Login", "./..."]
    assert args("cargo", "tests/it.rs") == ["--test", "it"]
    assert args("cargo", "tests::adds") == ["tests::adds"]
    assert args("vitest", "t/a.test.ts::math adds") == ["t/a.test.ts", "-t", "math adds"]
    assert args("jest", "login") == ["-t", "login"]
    assert args("mocha", "login") == ["--grep", "login"]
    assert args("unittest", "tests/test_x.py::T::test_a") == ["tests.test_x.T.test_a"]
    assert args("pytest", "tests/test_x.py::test_a") == ["tests/test_x.py::test_a"]
    assert args("rspec", "spec") == ["-e", "spec"]
    assert args("script", "only-this", "npm") == ["--", "only-this"]
    with pytest.raises(ToolError, match=r"No test file tests/nope\.py"):
        args("pytest", "tests/nope.py::test_a")
