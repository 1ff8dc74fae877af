#!/usr/bin/env node
// Questions, a plan and a todo list in a real VS Code: code-server with the extension
// installed from the .vsix, driven by Playwright. "agentls: Run Task…" starts a plan-mode
// run (setting agentls.mode = plan) against the scripted model, which writes a todo list,
// asks a multi-select question (answered in the extension's quick pick: two rows ticked),
// presents a plan (a read-only Markdown document beside the editor, approved in a quick
// pick "for review"), then makes its edit, which arrives in the Refactor Preview and is
// applied. The agent view shows the todo list. What the model was told is read back from
// the scripted server's request log.
//
// Usage: node e2e/plan.mjs [--python PATH] [--code-server PATH] [--chromium PATH]
//                          [--vsix PATH] [--screenshot PATH] [--keep]
// Prints one JSON line {ok, ...}; exit status 0 only when ok.
import {
  fixtureSession,
  applyPreview, editorText, finish, option, parseArgs, refactorPreview, runCommand,
  runSession, runTask, step, tickPreviewEntries, toolResults, waitFor,
} from "./harness.mjs";

const args = parseArgs();
const screenshot = option("screenshot", null);
/** The editor group with focus (the plan document opens beside hello.py). */
const ACTIVE_EDITOR = ".editor-group-container.active";

const PLAN = "## Plan\n1. Rename `greet` to `welcome` in hello.py.\n2. Update its caller.";
const EXPECTED = ["def welcome(name):", '    return "Hello, " + name', "", "", 'print(welcome("world"))'];
const TODOS_1 = [
  { content: "Rename greet", status: "in_progress", active_form: "Renaming greet" },
  { content: "Update the caller", status: "pending", active_form: "Updating the caller" },
  { content: "Run the tests", status: "pending", active_form: "Running the tests" },
];
const TODOS_2 = [
  { content: "Rename greet", status: "completed", active_form: "Renaming greet" },
  { content: "Update the caller", status: "completed", active_form: "Updating the caller" },
  { content: "Run the tests", status: "in_progress", active_form: "Running the tests" },
];
const QUESTION = {
  questions: [
    {
      question: "Which date formats should the parser accept?",
      header: "Formats",
      options: [
        { label: "ISO", description: "2024-01-31" },
        { label: "RFC", description: "Wed, 31 Jan 2024" },
        { label: "Unix", description: "seconds since 1970" },
      ],
      multi_select: true,
    },
  ],
};
const SCENARIO = {
  description: "VS Code e2e: a todo list, a multi-select question, a plan approved for review, the edit",
  turns: [
    {
      content: [
        { type: "text", text: "Let me plan this first." },
        { type: "tool_use", name: "todo_write", input: { todos: TODOS_1 } },
        { type: "tool_use", name: "ask_user_question", input: QUESTION },
      ],
    },
    { content: [{ type: "tool_use", name: "exit_plan_mode", input: { plan: PLAN } }] },
    {
      content: [
        { type: "tool_use", name: "edit_file", input: { path: "hello.py", old_string: "greet", new_string: "welcome", replace_all: true } },
        { type: "tool_use", name: "todo_write", input: { todos: TODOS_2 } },
      ],
    },
    { content: [{ type: "text", text: "Renamed **greet** to welcome." }] },
  ],
};

/** The tool_result the model got for its first call of `tool` (from the request log). */
function resultOf(tmp, tool) {
  return toolResults(tmp, tool)[0] ?? null;
}

/** A copy of e2e/fixture, in plan mode, and the scenario written next to it. */
const prepare = fixtureSession("plan", SCENARIO);

async function drive({ page, tmp, result }) {
  const entry = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "hello.py" }).first();
  await entry.waitFor({ state: "visible", timeout: 60000 });
  await entry.dblclick();
  await waitFor("hello.py open", 20000, async () => (await editorText(page, ACTIVE_EDITOR))?.[0] === "def greet(name):");

  await runTask(page, "Rename greet to welcome", { timeout: 60000 });
  const widget = page.locator(".quick-input-widget");
  const input = widget.locator("input").first();

  // The question: the extension's quick pick, several rows ticked.
  const title = widget.locator(".quick-input-title");
  await waitFor("the question's quick pick", 90000, async () => ((await title.textContent()) ?? "").includes("agentls asks (1/1): Formats"));
  result.questionTitle = await title.textContent();
  result.questionPlaceholder = await input.getAttribute("placeholder");
  const rows = widget.locator(".quick-input-list .monaco-list-row");
  const labels = () => rows.evaluateAll((items) => items.map((r) => r.getAttribute("aria-label") ?? ""));
  result.questionRows = await labels();
  for (const label of ["ISO", "Unix"]) {
    const row = widget.locator(".quick-input-list .monaco-list-row", { hasText: label }).first();
    const box = row.locator("input[type=checkbox], .monaco-checkbox, .quick-input-list-checkbox").first();
    await ((await box.count()) ? box.click() : row.click());
  }
  await waitFor("two rows ticked", 10000, async () => {
    const checked = await widget.locator(".quick-input-list .monaco-list-row[aria-checked=true], .quick-input-list input[type=checkbox]:checked").count();
    return checked === 2;
  });
  await input.press("Enter");
  step("question answered");

  // The plan: a Markdown document beside, and a quick pick to decide.
  await waitFor("the plan's quick pick", 60000, async () => ((await title.textContent()) ?? "").includes("the agent's plan"));
  result.planTitle = await title.textContent();
  result.planChoices = await labels();
  const planTab = page.locator(".tab", { hasText: "plan " }).first();
  await planTab.waitFor({ state: "visible", timeout: 20000 });
  result.planTab = (await planTab.textContent())?.trim();
  result.planText = await waitFor("the plan document shows the plan", 20000, async () => {
    const texts = await page.locator(".editor-instance .monaco-editor .view-lines").allTextContents();
    const found = texts.map((t) => t.replace(/\u00a0/g, " ")).find((t) => t.includes("Rename `greet` to `welcome`"));
    return found ?? null;
  });
  if (screenshot) {
    await page.screenshot({ path: screenshot });
  }
  await widget.locator(".quick-input-list .monaco-list-row", { hasText: "Approve and let the agent edit (review)" }).first().click();
  step("plan approved");

  // Review mode with change annotations: the Refactor Preview; tick every entry, Apply.
  const preview = refactorPreview(page);
  await preview.waitFor({ state: "visible", timeout: 60000 });
  await tickPreviewEntries(preview);
  await applyPreview(page);
  step("preview applied");
  await page.locator(".tab", { hasText: "hello.py" }).first().click();
  result.editorText = await waitFor("editor shows the edit", 30000, async () => {
    const lines = await editorText(page, ACTIVE_EDITOR);
    return lines && JSON.stringify(lines) === JSON.stringify(EXPECTED) ? lines : null;
  });

  // The agent view: the todo list as the agent left it, and the approval note.
  await runCommand(page, "agentls: Open Agent View");
  const view = page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
  const todos = view.locator(".todo-box li");
  await waitFor("todo list in the view", 30000, async () => (await todos.count()) === 3);
  result.viewTodos = (await todos.allTextContents()).map((t) => t.replace(/\s+/g, " ").trim());
  result.viewTodoClasses = await todos.evaluateAll((items) => items.map((li) => li.className));
  result.viewNotes = await view.locator(".note").allTextContents();
  result.questionResult = resultOf(tmp, "ask_user_question");
  result.planResult = resultOf(tmp, "exit_plan_mode");
}

await finish(() =>
  runSession(args, {
    tmpPrefix: "agentls-vscode-plan-",
    prepare,
    viewport: { width: 1280, height: 800 },
    logTail: 4000,
    drive,
  }),
);
