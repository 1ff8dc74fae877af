"""The turn journal: what a run did, recoverable after the server was killed mid-run.

The state file is written at run start and run end; in between, the run lives in the
transcript, which gets every message anyway. After each complete turn (the prompt, then
every assistant message whose tool results are in the history) the loop appends a
`checkpoint` record: session counters, usage, the staged paths, and the staged changeset
itself when it changed since the previous checkpoint.

`recover` replays the interrupted run's records onto the state file's history — `message`
records append (merging user content as the session does), a `compaction` record replaces
the history — and stops at the last checkpoint. The result is the history up to the last
complete turn: no `tool_use` without its `tool_result`, nothing from a turn that was cut off.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from agentls.agent.persistence.staged import StagedChange
from agentls.agent.persistence.transcript import TranscriptWriter, read_records
from agentls.agent.protocol.accounting import Tally
from agentls.agent.protocol.messages import History, add_user_blocks, blocks_of, parse_history
from agentls.agent.protocol.usage import Usage

CHECKPOINT = "checkpoint"
_CHANGES = TypeAdapter(list[StagedChange])


def write_checkpoint(
    transcript: TranscriptWriter,
    *,
    run: int,
    turn: int,
    turns: int,
    tally: Tally,
    staged_paths: Sequence[str],
    changes: list[StagedChange] | None,
    todos: Sequence[Mapping[str, object]] | None = None,
) -> None:
    """Record that turn `turn` of run `run` is complete (`changes`, `todos`: only when they
    changed)."""
    fields: dict[str, object] = {
        "run": run,
        "turn": turn,
        "turns": turns,
        "usage": tally.usage.to_dict(),
        "cost_usd": tally.cost_usd,
        "cost_note": tally.cost_note,
        "staged": list(staged_paths),
    }
    if changes is not None:
        fields["changes"] = [c.model_dump() for c in changes]
    if todos is not None:
        fields["todos"] = [dict(t) for t in todos]
    transcript.write(CHECKPOINT, **fields)


@dataclass
class Recovery:
    """The interrupted run as far as its journal goes."""

    found: bool
    """Whether the run's records were in the transcript at all."""
    messages: History
    prompt: str = ""
    run_turns: int = 0
    """Turns of the interrupted run that completed."""
    turns: int | None = None
    tally: Tally | None = None
    staged_paths: list[str] = field(default_factory=list)
    changes: list[StagedChange] | None = None
    """The staged changeset at the last checkpoint that carried one (None: keep the state's)."""
    todos: list[object] | None = None
    """The todo list at the last checkpoint that carried one (None: keep the state's)."""


def recover(transcript: Path, run: int, base: History, compactions: int = 0) -> Recovery:
    """Replay run `run` of `transcript` onto `base`, the history the state file holds.

    The state file was saved when the run started, or later by a compaction in the run
    (`compactions` says which: it counts them): the replay starts at that point.
    """
    try:
        records = list(read_records(transcript))
    except OSError:
        return Recovery(False, list(base))
    start = _run_start(records, run)
    if start is None:
        return Recovery(False, list(base))
    recovery = Recovery(True, list(base), prompt=str(records[start].get("prompt") or ""))
    history = list(base)
    saved_at = _saved_compaction(records, start, compactions)
    if saved_at is not None:
        # the turn counts of the checkpoints before it still hold (its history does not)
        for record in records[start + 1 : saved_at]:
            if record.get("type") == CHECKPOINT:
                _counters(recovery, record)
        start = saved_at
    for record in records[start + 1 :]:
        kind = record.get("type")
        if kind == "run_start":
            break  # a later run (should not happen: recovery persists at once)
        if kind == "message":
            _replay_message(history, record)
        elif kind == "compaction":
            replaced = _history(record.get("messages"))
            if replaced is not None:
                history = replaced
        elif kind == CHECKPOINT:
            _checkpoint(recovery, record, history)
    return recovery


def _run_start(records: Sequence[Mapping[str, object]], run: int) -> int | None:
    for index in range(len(records) - 1, -1, -1):
        record = records[index]
        if record.get("type") == "run_start" and record.get("run") == run:
            return index
    return None


def _saved_compaction(
    records: Sequence[Mapping[str, object]], start: int, compactions: int
) -> int | None:
    """The run's compaction record the state file was saved from, if it was."""
    for index in range(start + 1, len(records)):
        record = records[index]
        if record.get("type") == "compaction" and record.get("number") == compactions:
            return index
    return None


def _replay_message(history: History, record: Mapping[str, object]) -> None:
    role = record.get("role")
    parsed = _history([{"role": role, "content": record.get("content")}])
    if not parsed:
        return
    blocks = blocks_of(parsed[0])
    if role == "user":
        add_user_blocks(history, blocks)
    elif blocks:
        history.append(parsed[0])


def _checkpoint(recovery: Recovery, record: Mapping[str, object], history: History) -> None:
    # add_user_blocks replaces the trailing message instead of mutating it, so a shallow
    # copy of the list is a true snapshot
    recovery.messages = list(history)
    _counters(recovery, record)
    cost, note = record.get("cost_usd"), record.get("cost_note")
    recovery.tally = Tally(
        Usage.from_dict(record.get("usage")),
        float(cost) if isinstance(cost, int | float) else None,
        note if isinstance(note, str) else None,
    )
    staged = record.get("staged")
    if isinstance(staged, list):
        recovery.staged_paths = [str(p) for p in staged]
    if "changes" in record:
        with contextlib.suppress(ValidationError):  # else keep the last good one
            recovery.changes = _CHANGES.validate_python(record["changes"])
    todos = record.get("todos")
    if isinstance(todos, list):
        recovery.todos = list(todos)


def _counters(recovery: Recovery, record: Mapping[str, object]) -> None:
    turn, turns = record.get("turn"), record.get("turns")
    recovery.run_turns = turn if isinstance(turn, int) else recovery.run_turns
    recovery.turns = turns if isinstance(turns, int) else recovery.turns


def _history(data: object) -> History | None:
    try:
        return parse_history(data)
    except ValueError:
        return None


def interruption_note(recovery: Recovery, staged_paths: Iterable[str]) -> str:
    """What the model is told at the next prompt about the run that was cut off."""
    paths = list(staged_paths)
    prompt = " ".join(recovery.prompt.split())
    if len(prompt) > 200:
        prompt = prompt[:199] + "…"
    lines = [
        "<system-reminder>The previous run was interrupted: the agentls server stopped "
        "(killed or crashed) before it finished"
        + (f" (the request was: {prompt!r})" if prompt else "")
        + ".",
        f"The conversation above is restored up to the last complete turn ({recovery.run_turns} "
        "turn(s) of that run). Tool calls made after it did not report back: they may have "
        "run partly or not at all, so check the files before relying on them.",
    ]
    if paths:
        lines.append("Edits staged in this session (not yet accepted by the user):")
        lines.extend(f"- {p}" for p in paths)
    else:
        lines.append("No edits were staged when it stopped.")
    lines.append("</system-reminder>")
    return "\n".join(lines)
