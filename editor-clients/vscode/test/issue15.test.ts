import assert from "node:assert/strict";
import { test } from "node:test";
import { commandItems, commandPrompt } from "../src/commandPrompts";
import { cellLanguage, parseNotebookEdit } from "../src/notebookOps";

test("custom commands become quick-pick items and prompts", () => {
  const [item] = commandItems([{ name: "review", description: "Review (project)", argument_hint: "<file>", source: "project" }]);
  assert.equal(item.label, "/review");
  assert.equal(item.description, "<file>");
  assert.equal(commandPrompt("review", " src/app.py "), "/review src/app.py");
  assert.equal(commandPrompt("standup", ""), "/standup");
});

test("notebook edits are checked before anything is applied", () => {
  const request = parseNotebookEdit({
    uri: "file:///a.ipynb",
    label: "agentls",
    edits: [
      { index: 3, delete: 1, cells: [{ kind: "code", source: "1 / 2", metadata: {}, id: "boom" }] },
      { index: 1, delete: 0, cells: [{ kind: "markdown", source: "## Setup", metadata: {} }] },
    ],
  });
  assert.deepEqual(request.edits.map((e) => [e.index, e.delete]), [[3, 1], [1, 0]]);
  assert.equal(request.edits[0].cells[0].id, "boom");
  assert.equal(cellLanguage(request.edits[1].cells[0], "python"), "markdown");
  assert.throws(() => parseNotebookEdit({ uri: "x", edits: [{ index: 1, delete: 0 }, { index: 2, delete: 0 }] }), /last first/);
  assert.throws(() => parseNotebookEdit({ uri: "x", edits: [{ index: 0, delete: 0, cells: [{}] }] }), /needs a source/);
  assert.throws(() => parseNotebookEdit(null), /needs \{uri, edits\}/);
});
