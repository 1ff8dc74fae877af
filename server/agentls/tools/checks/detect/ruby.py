"""Ruby: rubocop (`--format json`) and rspec (`--format json`), through `bundle exec` when
the project has a Gemfile.lock (its pinned versions), else from PATH."""

from __future__ import annotations

from typing import Final

from agentls.tools.checks.commands import CheckCommand
from agentls.tools.checks.detect.base import Detection
from agentls.tools.checks.projects import ProjectDir

__all__ = ["detect"]

RUBY: Final = frozenset({"ruby"})


def detect(project: ProjectDir) -> Detection:
    found = Detection()
    lock = project.find_up("Gemfile.lock")
    gems = (project.read_text("Gemfile.lock") or "") + (project.read_text("Gemfile") or "")
    prefix: tuple[str, ...] = ("bundle", "exec") if lock else ()
    via = " through bundle exec (Gemfile.lock)" if lock else ""
    install = "bundle install" if lock else None
    rubocop_config = project.find_up(".rubocop.yml")
    if rubocop_config or "rubocop" in gems:
        why = f"{rubocop_config[0]} found" if rubocop_config else "rubocop in the Gemfile"
        found.lint.append(
            CheckCommand(
                kind="lint",
                tool="rubocop",
                argv=(*prefix, "rubocop", "--format", "json", "--force-exclusion", "{paths}"),
                format="rubocop-json",
                project=project.path,
                languages=RUBY,
                why=f"{why}: rubocop with its JSON formatter{via}",
                install=install or "gem install rubocop",
            )
        )
    else:
        found.nothing_found = f"no .rubocop.yml and no rubocop in the Gemfile of {project.where()}"
    spec = project.has(".rspec", "spec")
    if spec or "rspec" in gems:
        why = f"{spec} found" if spec else "rspec in the Gemfile"
        found.tests.append(
            CheckCommand(
                kind="tests",
                tool="rspec",
                argv=(*prefix, "rspec", "--format", "json", "--out", "{report}", "{target}"),
                format="rspec-json",
                project=project.path,
                languages=RUBY,
                why=f"{why}: rspec with its JSON formatter{via}",
                install=install or "gem install rspec",
                targets="rspec",
            )
        )
    elif project.has("Rakefile"):
        found.tests.append(
            CheckCommand(
                kind="tests",
                tool="rake test",
                argv=(*prefix, "rake", "test"),
                format="raw",
                project=project.path,
                languages=RUBY,
                why="no rspec; Rakefile found: `rake test` runs, its output is plain text",
                install=install or "gem install rake",
                targets="raw",
            )
        )
    return found
