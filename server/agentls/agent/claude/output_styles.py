"""Claude Code's output styles: `outputStyle` in its settings picks a Markdown file from
`.claude/output-styles/` (each root) or `~/.claude/output-styles/` whose body joins the
main agent's system prompt.

The style is named by its front matter's `name` or its file name (case-insensitive); the
settings are read like Claude Code's (user, then project, then local: the last wins).
`default` means none. Claude Code's own built-in styles (`Explanatory`, `Learning`) are
not files, so they are not offered here (the log says so). agentls keeps its own tool
instructions whatever the style says (`keep-coding-instructions` is not needed).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.agent.claude.frontmatter import FrontMatterError, read_markdown, text_field

__all__ = ["OutputStyle", "output_style", "style_problem"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutputStyle:
    name: str
    prompt: str
    path: Path

    def section(self) -> str:
        return f"# Output style: {self.name}\n{self.prompt}"


def output_style(roots: Sequence[Path], home: Path | None = None) -> OutputStyle | None:
    """The style the settings choose, or None (no setting, `default`, or not found)."""
    home = home or Path.home()
    wanted = _setting(roots, home)
    if not wanted or wanted.lower() == "default":
        return None
    folders = [root / ".claude" / "output-styles" for root in roots]
    folders.append(home / ".claude" / "output-styles")
    for folder in folders:
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            style = _load(path)
            if style is not None and style.name.lower() == wanted.lower():
                return style
    log.warning("outputStyle %r: no such style in .claude/output-styles; none used", wanted)
    return None


BUILT_IN = frozenset({"explanatory", "learning"})


def style_problem(roots: Sequence[Path], home: Path | None = None) -> list[str]:
    """Why the chosen `outputStyle` is not used, when it is not (for the settings'
    problems: shown at start-up and by `agentls doctor`)."""
    home = home or Path.home()
    wanted = _setting(roots, home)
    if not wanted or wanted.lower() == "default" or output_style(roots, home) is not None:
        return []
    why = (
        "Claude Code's built-in styles are not files (its explanatory-output-style and "
        "learning-output-style plugins bring them as SessionStart hooks)"
        if wanted.lower() in BUILT_IN
        else "no such style in .claude/output-styles or ~/.claude/output-styles"
    )
    return [f"outputStyle {wanted!r} is not used: {why}"]


def _setting(roots: Sequence[Path], home: Path) -> str:
    files = [home / ".claude" / "settings.json"]
    for root in roots:
        files += [root / ".claude" / "settings.json", root / ".claude" / "settings.local.json"]
    chosen = ""
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        except (OSError, ValueError):
            continue
        value = data.get("outputStyle") if isinstance(data, dict) else None
        if isinstance(value, str) and value.strip():
            chosen = value.strip()
    return chosen


def _load(path: Path) -> OutputStyle | None:
    try:
        data, body = read_markdown(path)
        name = text_field(data, "name") or path.stem
    except FrontMatterError as exc:
        log.warning("output style %s skipped: %s", path, exc)
        return None
    return OutputStyle(name, body.strip(), path) if body.strip() else None
