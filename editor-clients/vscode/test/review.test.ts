// Issue 30 in the extension: each staged file's check before review in the view model, and
// the turns a rewind offers (prompt and files, newest first).
import assert from "node:assert/strict";
import { test } from "node:test";
import { rewindMessage, turnItems } from "../src/turns";
import { ViewModel } from "../src/viewModel";

test("a run result's checks label the view's staged files", () => {
  const model = new ViewModel((uri) => uri.replace("file:///w/", ""));
  model.apply({
    type: "run_result",
    session_id: "s1",
    status: "completed",
    edit: { files: ["file:///w/a.py", "file:///w/my%20b.py"], applied: null },
    checks: [
      { path: "/w/a.py", summary: "tests 41/41 ✓ · 0 new errors", new_errors: 0, tests: { status: "passed" } },
      { path: "/w/my b.py", summary: "1 new error: my b.py:3 error: Argument of type…", new_errors: 1 },
    ],
  });
  const files = model.sessions.get("s1")!.files;
  assert.deepEqual(
    files.map((f) => [f.name, f.check, f.checkFailed]),
    [
      ["a.py", "tests 41/41 ✓ · 0 new errors", false],
      ["my%20b.py", "1 new error: my b.py:3 error: Argument of type…", true],
    ],
  );
});

test("failing tests mark a file's check failed", () => {
  const model = new ViewModel();
  model.apply({
    type: "run_result",
    session_id: "s2",
    status: "completed",
    edit: { files: ["file:///w/c.py"], applied: null },
    checks: [{ path: "/w/c.py", summary: "tests 1/2 ✗ (t) · 0 new errors", new_errors: 0, tests: { status: "failed" } }],
  });
  assert.equal(model.sessions.get("s2")!.files[0].checkFailed, true);
});

test("the turns to rewind to: prompt and files, newest first", () => {
  const status = {
    sessions: [
      { id: "other", history: [{ turn: 1, prompt: "no", files: [] }] },
      {
        id: "s1",
        history: [
          { turn: 1, prompt: "Rename greet", files: ["/w/hello.py", "/w/pkg/b.py"] },
          { turn: 2, prompt: "go on", files: [] },
        ],
      },
    ],
  };
  assert.deepEqual(turnItems(status, "s1"), [
    { label: "2. go on", description: "no files", turn: 2 },
    { label: "1. Rename greet", description: "hello.py, b.py", turn: 1 },
  ]);
  assert.deepEqual(turnItems({}, "s1"), []);
  assert.equal(
    rewindMessage("s1", 1, { dropped: [{}], reverted: [{}] }),
    "agentls: session s1 is back at the end of turn 1 (1 later turn(s) dropped; 1 file(s) changed since are reversed (review the edit, or Show Staged Diff))",
  );
});
