"""Session transcripts: one JSONL file per session, and a tree view of it.

Each line is one record (`session`, `resume`, `run_start`, `request`, `message`,
`tool_result`, `usage`, `retry`, `notice`, `checkpoint`, `compaction_start`, `compaction`,
`compaction_failed`, `todos`, `mode`, `subagent_start`, `subagent_end`, `run_end`) with a
timestamp. A sub-agent (the `task` tool) writes a transcript of its own (its first record
is `subagent`), named by the `subagent_start` / `subagent_end` records of its session's; the
tree view shows it under the call that launched it. `checkpoint` records journal each complete
turn (see `agentls.agent.persistence.journal`). The transcript keeps the full history:
compaction and tool-result stubbing change only what later requests send. Request records
keep the request's shape (model, sizes, tool names and a hash of the tools array), never
credentials. Files live in the user's cache directory unless `AGENTLS_TRANSCRIPT_DIR` points
elsewhere. They hold the user's code and prompts, so they are private
(`agentls.privatefiles`): 0600 files in a 0700 folder, never written through a symlink
planted at their name, and never in a folder another user owns or replaced by a symlink.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO, TypeAlias

import platformdirs

TranscriptRecord: TypeAlias = Mapping[str, object]
"""One parsed line: `type`, `ts` and the record's own fields (JSON values)."""


def transcript_dir() -> Path:
    """`AGENTLS_TRANSCRIPT_DIR`, else the user's cache directory."""
    from agentls.config.environment import environment

    configured = environment()[0].transcript_dir
    if configured is not None:
        return configured.expanduser()
    return Path(platformdirs.user_cache_dir("agentls")) / "transcripts"


class TranscriptWriter:
    """Appends records to a session's transcript; a write failure is logged, never fatal
    (a folder or file that cannot be made private is such a failure: nothing is written)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: TextIO | None = None
        self._claude: ClaudeTranscript | None = None

    def write(self, record_type: str, **fields: Any) -> None:
        record = {"type": record_type, "ts": round(time.time(), 3), **fields}
        line = json.dumps(record, ensure_ascii=False, default=str)
        try:
            if self._file is None:
                from agentls.privatefiles import open_private, private_dir

                private_dir(self.path.parent)
                self._file = open_private(self.path)
            self._file.write(line + "\n")
            self._file.flush()
        except OSError:
            import logging

            logging.getLogger(__name__).exception("cannot write transcript %s", self.path)
        if record_type == "message" and fields.get("role") in ("user", "assistant"):
            if self._claude is None:
                self._claude = ClaudeTranscript(claude_transcript_path(self.path))
            self._claude.add(str(fields["role"]), fields.get("content"))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._claude is not None:
            self._claude.close()
            self._claude = None


CLAUDE_FOLDER = "claude-code"


def claude_transcript_path(path: Path) -> Path:
    """Where the Claude Code-format copy of the transcript `path` lives (what hooks get as
    `transcript_path`): `claude-code/<name>` beside it, so session listings never see it."""
    return path.parent / CLAUDE_FOLDER / path.name


class ClaudeTranscript:
    """The session's messages in Claude Code's JSONL transcript format, for hooks that read
    `transcript_path` (ralph-wiggum's Stop hook greps `"role":"assistant"` and reads
    `.message.content`): one compact line per message, `type` user/assistant, `uuid`,
    `parentUuid`, `sessionId`, `timestamp`, `message` {role, content}. Private like the
    transcript; a write failure is logged, never fatal."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.session_id = path.stem
        self.parent: str | None = None
        self._file: TextIO | None = None

    def add(self, role: str, content: object) -> None:
        import datetime
        import uuid

        entry = {
            "type": role,
            "uuid": str(uuid.uuid4()),
            "parentUuid": self.parent,
            "sessionId": self.session_id,
            "timestamp": datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds"),
            "message": {"role": role, "content": content},
        }
        self.parent = str(entry["uuid"])
        line = json.dumps(entry, ensure_ascii=False, default=str, separators=(",", ":"))
        try:
            if self._file is None:
                self._file = self.open()
            self._file.write(line + "\n")
            self._file.flush()
        except OSError:
            import logging

            logging.getLogger(__name__).exception("cannot write transcript %s", self.path)

    def open(self) -> TextIO:
        from agentls.privatefiles import open_private, private_dir

        private_dir(self.path.parent.parent)
        private_dir(self.path.parent)
        return open_private(self.path)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_records(path: Path) -> Iterator[TranscriptRecord]:
    """Records of a transcript; a torn last line (crash mid-write) is skipped."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                yield record


def resolve_transcript(name: str) -> Path:
    """A transcript file path, or a session id looked up in the transcript directory."""
    candidate = Path(name).expanduser()
    if candidate.is_file():
        return candidate
    by_id = transcript_dir() / f"{name}.jsonl"
    if by_id.is_file():
        return by_id
    raise FileNotFoundError(
        f"no transcript file or session id {name!r} (looked in {transcript_dir()})"
    )


def render_tree(records: Iterable[TranscriptRecord], path: Path | None = None) -> str:
    """Turns and tool calls as an indented tree, for `agentls transcript FILE`; each
    sub-agent's own transcript is shown under the call that launched it (`path`: where
    these records came from, to find sub-agent files that moved with it)."""
    return "\n".join(_TreeRenderer(path).render(records))


def subagent_transcripts(path: Path) -> list[Path]:
    """The sub-agent transcripts a session's transcript names, in order."""
    found: list[Path] = []
    try:
        for record in read_records(path):
            if record.get("type") == "subagent_start":
                child = _child_path(record, path)
                if child is not None and child not in found:
                    found.append(child)
    except OSError:
        return found
    return found


def _child_path(record: TranscriptRecord, parent: Path | None) -> Path | None:
    """A sub-agent's transcript file: as recorded, else beside `parent` (moved together)."""
    named = record.get("transcript")
    if not isinstance(named, str) or not named:
        return None
    recorded = Path(named)
    if recorded.is_file() or parent is None:
        return recorded
    moved = parent.with_name(parent.stem + ".agents") / recorded.name
    return moved if moved.is_file() else recorded


def _items(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _fields(value: object) -> Mapping[str, object]:
    return value if isinstance(value, dict) else {}


SUBAGENT_INDENT = "│  │  │     "
MAX_NESTING = 3


class _TreeRenderer:
    def __init__(self, path: Path | None = None, depth: int = 0) -> None:
        self.calls: dict[str, Mapping[str, object]] = {}
        self.path = path
        self.depth = depth

    def render(self, records: Iterable[TranscriptRecord]) -> Iterator[str]:
        for record in records:
            yield from self._one(record)

    def _one(self, r: TranscriptRecord) -> Iterator[str]:  # noqa: C901 - one line per record type, a flat table
        kind = r.get("type")
        if kind == "session":
            tools = len(_items(r.get("tools")))
            yield f"session {r.get('session_id')}  model={r.get('model')}  tools={tools}"
        elif kind == "resume":
            discovered = len(_items(r.get("discovered_tools")))
            yield (
                f"session {r.get('session_id')} resumed  model={r.get('model')}  "
                f"messages={r.get('messages')}  discovered_tools={discovered}"
            )
        elif kind == "compaction":
            yield (
                f"│  ├─ compaction ({r.get('reason')}): ~{r.get('before_tokens')} → "
                f"~{r.get('after_tokens')} tokens, {r.get('summarized_messages')} messages "
                f"summarised, {r.get('kept_turns')} turns kept"
            )
        elif kind == "compaction_failed":
            yield f"│  ├─ compaction failed: {r.get('error')}"
        elif kind == "run_start":
            yield f"├─ run {r.get('run')}: {_short(str(r.get('prompt', '')), 70)!r}"
        elif kind == "request":
            yield f"│  ├─ turn {r.get('turn')}  ({r.get('message_count')} messages)"
        elif kind == "message" and r.get("role") == "assistant":
            yield from self._assistant(_items(r.get("content")))
        elif kind == "tool_result":
            yield self._result(r)
        elif kind == "usage":
            u = _fields(r.get("usage"))
            yield (
                f"│  │  └─ stop={r.get('stop_reason')}  in={u.get('input_tokens')} "
                f"out={u.get('output_tokens')} cache_read={u.get('cache_read_input_tokens')} "
                f"cache_write={u.get('cache_creation_input_tokens')}"
            )
        elif kind == "retry":
            yield f"│  │  ↻ retry {r.get('attempt')} after {r.get('delay_s')}s: {r.get('error')}"
        elif kind == "notice":
            yield f"│  │  ! {r.get('message')}"
        elif kind == "run_end":
            error = f"  error: {r['error']}" if r.get("error") else ""
            yield f"│  └─ {r.get('status')} after {r.get('turns')} turns{error}"
        elif kind == "subagent":
            yield f"sub-agent {r.get('agent')}  model={r.get('model')}: {r.get('description')!r}"
        elif kind == "subagent_start":
            yield (
                f"│  │  ├─ ▶ sub-agent {r.get('agent')} for {r.get('tool_use_id')}: "
                f"{_short(str(r.get('description', '')), 60)!r}"
            )
        elif kind == "subagent_end":
            yield from self._subagent(r)
        elif kind == "todos":
            items = [_fields(t) for t in _items(r.get("todos"))]
            done = sum(1 for t in items if t.get("status") == "completed")
            yield f"│  │  ├─ todos {done}/{len(items)}"
        elif kind == "mode":
            yield f"│  │  ├─ mode → {r.get('mode')}"

    def _subagent(self, r: TranscriptRecord) -> Iterator[str]:
        """The sub-agent's own transcript, indented under the call that launched it."""
        child = _child_path(r, self.path)
        lines: list[str] = []
        if child is not None and self.depth < MAX_NESTING:
            try:
                nested = _TreeRenderer(child, self.depth + 1)
                lines = list(nested.render(read_records(child)))
            except OSError as exc:
                lines = [f"(its transcript cannot be read: {exc.strerror or exc})"]
        usage = _fields(r.get("usage"))
        tokens = int(_number(usage.get("input_tokens"))) + int(_number(usage.get("output_tokens")))
        yield f"│  │  ├─ ◀ sub-agent {r.get('agent')} for {r.get('tool_use_id')}:"
        for line in lines:
            yield SUBAGENT_INDENT + line
        error = f"  error: {r['error']}" if r.get("error") else ""
        yield (
            f"{SUBAGENT_INDENT}└─ {r.get('status')} after {r.get('turns')} turns, "
            f"{tokens} tokens{error}"
        )

    def _assistant(self, content: list[object]) -> Iterator[str]:
        for block in map(_fields, content):
            text = block.get("text")
            if block.get("type") == "text" and isinstance(text, str) and text.strip():
                yield f"│  │  ├─ text: {_short(text, 90)!r}"
            elif block.get("type") == "tool_use":
                self.calls[str(block.get("id"))] = block
                args = json.dumps(block.get("input", {}), ensure_ascii=False)
                yield f"│  │  ├─ {block.get('name')} {_short(args, 80)}"
            elif block.get("type") == "server_tool_use":
                args = json.dumps(block.get("input", {}), ensure_ascii=False)
                yield f"│  │  ├─ {block.get('name')} (server) {_short(args, 70)}"
            elif block.get("type") == "web_search_tool_result":
                yield f"│  │  │  {_search_results(block.get('content'))}"

    def _result(self, r: TranscriptRecord) -> str:
        call = self.calls.get(str(r.get("tool_use_id")), {})
        mark = "✗" if r.get("is_error") else "✓"
        content = r.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        duration = r.get("duration_ms")
        ms = float(duration) if isinstance(duration, int | float) else 0.0
        return f"│  │  │  {mark} {call.get('name', '?')} {ms:.0f} ms: {_short(text, 80)!r}"


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _search_results(content: object) -> str:
    """One line for a server-side search's result block: its hosts, or its error."""
    if isinstance(content, dict):
        return f"✗ web_search: {content.get('error_code', 'error')}"
    urls = [str(_fields(r).get("url", "")) for r in _items(content)]
    hosts = [u.split("/")[2] if u.count("/") >= 2 else u for u in urls]
    return f"✓ web_search: {len(urls)} results ({_short(', '.join(hosts), 70)})"


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
