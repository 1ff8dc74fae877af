import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { type AgentEvent } from "../src/events";
import { describeEditResult, statusOfEditResult } from "../src/outcomes";
import { forWebview } from "../src/markdown";
import { DELIVERING, ViewModel } from "../src/viewModel";
import { WorkspaceFiles } from "../src/workspaceFiles";

const name = (uri: string): string => uri.replace("file:///w/", "");

function workspace(): { root: string; files: WorkspaceFiles } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "agentls-links-"));
  fs.mkdirSync(path.join(root, "src"));
  fs.writeFileSync(path.join(root, "calc.py"), "x = 1\n");
  fs.writeFileSync(path.join(root, "src", "app.ts"), "export {};\n");
  fs.writeFileSync(path.join(os.tmpdir(), "outside.py"), "secret\n");
  return { root, files: new WorkspaceFiles(() => [root]) };
}

function html(text: string, files: WorkspaceFiles): string {
  const view = new ViewModel(name);
  view.apply({ type: "run_started", session_id: "s", prompt: "p" });
  view.apply({ type: "text_delta", session_id: "s", text });
  const drawn = forWebview(view.sessions.get("s")!, files.resolve) as { items: { kind: string; html?: string }[] };
  return drawn.items.filter((i) => i.kind === "text").map((i) => i.html).join("");
}

test("file names are links to the file at the line, never web domains", () => {
  const { root, files } = workspace();
  const out = html("Fixed calc.py:12 and `src/app.ts`; see example.com and ../outside.py.", files);
  assert.doesNotMatch(out, /http:\/\/calc\.py|http:\/\/example\.com/);
  assert.match(out, new RegExp(`<a href="#" class="file-link" data-path="${path.join(root, "calc.py")}"[^>]*data-line="12">calc.py:12</a>`));
  assert.match(out, new RegExp(`data-path="${path.join(root, "src", "app.ts")}"[^>]*><code>src/app.ts</code></a>`));
  assert.doesNotMatch(out, /outside\.py<\/a>/); // outside the workspace: no link
  assert.doesNotMatch(out, /data-path="[^"]*missing/);
});

test("a run that finished its model work shows it delivers its edits, and usage moves during the run", () => {
  const view = new ViewModel(name);
  const events: AgentEvent[] = [
    { type: "run_started", session_id: "s", prompt: "p" },
    { type: "turn_usage", session_id: "s", turn: 1, usage: { input_tokens: 100, output_tokens: 10 } },
  ];
  for (const e of events) {view.apply(e);}
  const s = view.sessions.get("s")!;
  assert.equal(s.usage.input, 100); // during the run
  view.apply({ type: "turn_usage", session_id: "s", turn: 2, usage: { input_tokens: 50, output_tokens: 5 } });
  view.apply({ type: "run_finished", session_id: "s", status: "completed" });
  assert.equal(s.status, DELIVERING); // never "⟳ completed" beside Cancel
  assert.equal(s.running, true);
  view.apply({
    type: "run_result",
    session_id: "s",
    status: "completed",
    usage: { input_tokens: 150, output_tokens: 15, cost_usd: 0.25 },
  });
  assert.deepEqual([s.usage.input, s.usage.output, s.usage.costUsd, s.status], [150, 15, 0.25, "completed"]);
});

test("the unapplied reason is said once for the files it concerns", () => {
  const reason = "the file changed since the agent read it, on the lines the agent changed";
  const outcome = describeEditResult(
    {
      type: "edit_result",
      session_id: "s",
      action: "accept",
      applied: false,
      files: ["file:///w/a.py", "file:///w/b.py", "file:///w/c.py"],
      left_out: ["a", "b", "c"].map((f) => ({ uri: `file:///w/${f}.py`, reason })),
    },
    name,
  )!;
  assert.equal(outcome.message.split(reason).length - 1, 1);
  assert.match(outcome.message, /a\.py, b\.py, c\.py: the file changed/);
});

test("the status bar says what an accept did", () => {
  assert.equal(statusOfEditResult({ type: "edit_result", action: "accept", applied: true, files: ["a", "b", "c"] }), "applied 3 file(s)");
  assert.equal(statusOfEditResult({ type: "edit_result", action: "reject", files: ["a"] }), "rejected 1 file(s)");
});
