import assert from "node:assert/strict";
import { test } from "node:test";
import { type AgentEvent, renderEvent, RunTracker } from "../src/events";

function render(events: AgentEvent[]): string {
  let open = false;
  let out = "";
  for (const event of events) {
    const r = renderEvent(event, open);
    open = r.textOpen;
    out += r.text;
  }
  return out;
}

const RUN: AgentEvent[] = [
  { type: "run_started", session_id: "s1", prompt: "The user's current file is `a.py`.\n\nRename x" },
  { type: "text_delta", session_id: "s1", text: "I'll " },
  { type: "text_delta", session_id: "s1", text: "rename." },
  { type: "tool_started", session_id: "s1", name: "edit_file", summary: "Editing a.py" },
  { type: "tool_finished", session_id: "s1", name: "edit_file", is_error: false, duration_ms: 7.6 },
  { type: "text_delta", session_id: "s1", text: "Done." },
  { type: "run_finished", session_id: "s1", status: "completed", turns: 2, transcript: "file:///t/s1.jsonl" },
];

test("the live view streams text and puts each tool call on its own line", () => {
  assert.equal(
    render(RUN),
    "\n## s1 — Rename x\nI'll rename.\n→ Editing a.py\n✓ edit_file (8 ms)\nDone.\n== completed after 2 turn(s)\n",
  );
});

test("errors are marked", () => {
  assert.equal(render([{ type: "tool_finished", name: "run_tests", is_error: true, duration_ms: 1 }]), "✗ run_tests (1 ms)\n");
  assert.equal(render([{ type: "run_finished", status: "failed", turns: 1, error: "boom" }]), "== failed after 1 turn(s): boom\n");
});

test("unknown events render nothing and keep the text state", () => {
  assert.deepEqual(renderEvent({ type: "future_thing" }, true), { text: "", textOpen: true });
});

test("the tracker follows a run to its end", () => {
  const runs = new RunTracker();
  runs.started("s1");
  assert.equal(runs.statusText(), "$(sync~spin) agentls: starting");
  for (const event of RUN.slice(0, 4)) {
    runs.onEvent(event);
  }
  assert.equal(runs.statusText(), "$(sync~spin) agentls: Editing a.py");
  for (const event of RUN.slice(4)) {
    runs.onEvent(event);
  }
  assert.equal(runs.statusText(), undefined);
  assert.equal(runs.last, "s1");
  assert.deepEqual(runs.get("s1"), {
    session: "s1",
    running: false,
    status: "completed",
    transcript: "file:///t/s1.jsonl",
    text: "I'll rename.Done.",
  });
});

test("two runs show a count", () => {
  const runs = new RunTracker();
  runs.started("a");
  runs.started("b");
  assert.equal(runs.statusText(), "$(sync~spin) agentls: 2 runs");
});
