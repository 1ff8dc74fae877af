import assert from "node:assert/strict";
import { test } from "node:test";
import { renderEvent } from "../src/events";
import { answerOf, DEFAULT_PLAN_CHOICES, pickItems, planChoices } from "../src/questionModel";
import { ViewModel } from "../src/viewModel";

const question = {
  question: "Which formats?",
  header: "Formats",
  options: [{ label: "ISO", description: "2024-01-31" }, { label: "RFC" }],
  multi_select: true,
};

test("a question's rows: its options, then Other… for the user's own words", () => {
  const rows = pickItems(question, "Other…");
  assert.deepEqual(
    rows.map((r) => [r.label, r.detail, r.other]),
    [
      ["ISO", "2024-01-31", false],
      ["RFC", undefined, false],
      ["Other…", "Answer in your own words", true],
    ],
  );
});

test("answers: options picked, the user's own words, and no answer at all", () => {
  const [iso, rfc, other] = pickItems(question);
  assert.deepEqual(answerOf([iso, rfc], undefined), { selected: ["ISO", "RFC"], other: null });
  assert.deepEqual(answerOf([iso, other], "  also epoch  "), { selected: ["ISO"], other: "also epoch" });
  assert.deepEqual(answerOf([other], "mine"), { selected: [], other: "mine" });
  assert.equal(answerOf([other], undefined), undefined); // the input box was dismissed
  assert.equal(answerOf([other], "   "), undefined);
  assert.equal(answerOf([], undefined), undefined);
});

test("plan choices come from the server, else the defaults; unknown ids are dropped", () => {
  assert.deepEqual(planChoices({ session_id: "s", plan: "p" }), DEFAULT_PLAN_CHOICES);
  const sent = [
    { id: "keep_planning" as const, label: "Keep planning" },
    { id: "bogus" as never, label: "x" },
  ];
  assert.deepEqual(planChoices({ session_id: "s", plan: "p", choices: sent }), [sent[0]]);
});

test("the view notes a mode switch and the live view shows the todo list's state", () => {
  const model = new ViewModel();
  assert.equal(model.apply({ type: "mode_changed", session_id: "s", mode: "auto", permission_mode: "acceptEdits" }), true);
  const items = model.sessions.get("s")?.items ?? [];
  assert.deepEqual(items, [{ kind: "note", text: "Plan approved: the agent makes the changes, each applied as it is made." }]);
  const todos = [
    { content: "Rename", status: "completed", active_form: "Renaming" },
    { content: "Test", status: "in_progress", active_form: "Testing" },
    { content: "Docs", status: "pending", active_form: "Writing docs" },
  ];
  assert.equal(renderEvent({ type: "todos", session_id: "s", todos }, false).text, "☐ todos 1/3 · Testing\n");
});
