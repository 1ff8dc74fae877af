import assert from "node:assert/strict";
import { test } from "node:test";
import { type AgentEvent } from "../src/events";
import { describeEditResult, describeRunResult } from "../src/outcomes";
import { ViewModel } from "../src/viewModel";

const name = (uri: string): string => uri.replace("file:///w/", "");

const RUN: AgentEvent[] = [
  { type: "run_started", session_id: "s1", prompt: "The user's current file is `a.py`.\n\nRename x" },
  { type: "text_delta", session_id: "s1", text: "I'll **rename**" },
  { type: "text_delta", session_id: "s1", text: " it." },
  { type: "tool_started", session_id: "s1", tool_use_id: "t1", name: "edit_file", summary: "Editing a.py" },
  {
    type: "todos",
    session_id: "s1",
    todos: [
      { content: "Rename x", status: "in_progress", active_form: "Renaming x" },
      { content: "Run tests", status: "pending", active_form: "Running tests" },
      { content: "bogus", status: "weird" },
    ],
  },
  { type: "tool_finished", session_id: "s1", tool_use_id: "t1", name: "edit_file", is_error: false, duration_ms: 7.6 },
  { type: "run_finished", session_id: "s1", status: "completed", turns: 2 },
  {
    type: "run_result",
    session_id: "s1",
    status: "completed",
    outcome: "completed — 2 file(s) staged for review",
    usage: { input_tokens: 100, output_tokens: 20, cost_usd: 0.5 },
    edit: { files: ["file:///w/a.py", "file:///w/b.py"], applied: null },
  },
];

test("the model follows a run: prompt, streamed text, tool status, todos, usage, files", () => {
  const model = new ViewModel(name);
  for (const event of RUN) {
    model.apply(event);
  }
  const s = model.sessions.get("s1")!;
  assert.equal(s.title, "Rename x");
  assert.equal(s.running, false);
  assert.deepEqual(s.items[0], { kind: "prompt", text: "Rename x" });
  assert.deepEqual(s.items[1], { kind: "text", text: "I'll **rename** it." });
  assert.deepEqual(s.items[2], {
    kind: "tool",
    tool: { id: "t1", name: "edit_file", summary: "Editing a.py", status: "ok", durationMs: 7.6 },
  });
  assert.deepEqual(
    s.todos.map((t) => [t.content, t.status, t.activeForm]),
    [
      ["Rename x", "in_progress", "Renaming x"],
      ["Run tests", "pending", "Running tests"],
      ["bogus", "pending", undefined],
    ],
  );
  assert.deepEqual(s.usage, { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, costUsd: 0.5 });
  assert.deepEqual(
    s.files.map((f) => [f.name, f.state]),
    [
      ["a.py", "staged"],
      ["b.py", "staged"],
    ],
  );
  assert.equal(model.anyPending(), true);
});

test("per-file accept and reject update the files; left-out files keep their reason", () => {
  const model = new ViewModel(name);
  RUN.forEach((e) => model.apply(e));
  model.apply({ type: "edit_result", session_id: "s1", action: "reject", files: ["file:///w/b.py"] });
  model.apply({
    type: "edit_result",
    session_id: "s1",
    action: "accept",
    files: ["file:///w/a.py"],
    applied: false,
    left_out: [{ uri: "file:///w/a.py", reason: "the changes overlap" }],
  });
  const files = model.sessions.get("s1")!.files;
  assert.deepEqual(
    files.map((f) => [f.name, f.state, f.reason]),
    [
      ["a.py", "left out", "the changes overlap"],
      ["b.py", "rejected", undefined],
    ],
  );
  model.apply({ type: "edit_result", session_id: "s1", action: "accept", files: ["file:///w/a.py"], applied: true });
  assert.equal(model.anyPending(), false);
});

test("an unknown price makes the session's cost n/a", () => {
  const model = new ViewModel(name);
  model.apply({ type: "run_result", session_id: "s2", status: "completed", usage: { input_tokens: 5, cost_usd: null } });
  assert.equal(model.sessions.get("s2")!.usage.costUsd, null);
});

test("outcomes: staged, partly applied, refused, cancelled, rejected, nothing staged", () => {
  const staged = describeRunResult(RUN[RUN.length - 1], name)!;
  assert.equal(staged.message, "agentls: 2 file(s) staged for review in session s1: a.py, b.py");
  assert.deepEqual(staged.actions, ["Show Diff", "Accept Staged", "Reject"]);
  const partly = describeEditResult(
    {
      type: "edit_result",
      session_id: "s1",
      action: "accept",
      files: ["file:///w/a.py"],
      applied: true,
      left_out: [{ uri: "file:///w/b.py", reason: "the editor reported success but did not change the file" }],
    },
    name,
  )!;
  assert.equal(partly.severity, "warning");
  assert.match(partly.message, /^agentls: applied 1 file\(s\) \(a\.py\); left out and still staged: b\.py: the editor reported/);
  const refused = describeEditResult(
    { type: "edit_result", session_id: "s1", action: "accept", files: ["file:///w/a.py"], applied: false, reason: "the user cancelled" },
    name,
  )!;
  assert.match(refused.message, /nothing was applied .* the user cancelled/);
  assert.doesNotMatch(refused.message, /accepted|agentls\.accept/);
  const cancelled = describeRunResult(
    { type: "run_result", session_id: "s3", status: "cancelled", edit: { files: ["file:///w/a.py"], applied: null } },
    name,
  )!;
  assert.match(cancelled.message, /^agentls: the cancelled run left 1 file\(s\) staged/);
  const rejected = describeEditResult({ type: "edit_result", session_id: "s1", action: "reject", files: [] }, name)!;
  assert.equal(rejected.message, "agentls: nothing staged in session s1.");
  assert.equal(describeRunResult({ type: "run_result", session_id: "s4", status: "completed", edit: null }, name), undefined);
});
