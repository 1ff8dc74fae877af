#!/usr/bin/env node
// Per-hunk review in a real VS Code (issue 30): code-server with the extension from its
// .vsix, driven by Playwright. A review-mode run renames `greet` in hello.py (two hunks,
// lines 1 and 5); the edit arrives in the Refactor Preview with one change annotation per
// hunk (entries start unticked); only the line-1 hunk is ticked and applied. The editor
// then has line 1 changed and line 5 as it was, and the agent view shows the file with its
// check before review.
//
// Usage: node e2e/hunks.mjs [--python PATH] [--code-server PATH] [--chromium PATH]
//                           [--vsix PATH] [--screenshot PATH] [--keep]
// Prints one JSON line {ok, ...}; exit status 0 only when ok.
import {
  fixtureSession,
  applyPreview, editorText, finish, option, parseArgs, refactorPreview, runCommand, runSession,
  runTask, step, waitFor,
} from "./harness.mjs";

const args = parseArgs();
const screenshot = option("screenshot", null);
const ACTIVE_EDITOR = ".editor-group-container.active";
const SCENARIO = {
  description: "VS Code e2e: one file, two hunks; the Refactor Preview applies one",
  turns: [
    { content: [{ type: "tool_use", name: "edit_file", input: { path: "hello.py", old_string: "greet", new_string: "welcome", replace_all: true } }] },
    { content: [{ type: "text", text: "Renamed." }] },
  ],
};

const prepare = fixtureSession("review", SCENARIO);

const isChecked = async (box) =>
  (await box.getAttribute("aria-checked")) === "true" || (await box.evaluate((el) => el.checked === true));

async function drive({ page, result }) {
  const entry = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "hello.py" }).first();
  await entry.waitFor({ state: "visible", timeout: 60000 });
  await entry.dblclick();
  await waitFor("hello.py open", 20000, async () => (await editorText(page, ACTIVE_EDITOR))?.[0] === "def greet(name):");
  await runTask(page, "Rename greet to welcome", { timeout: 60000 });

  const preview = refactorPreview(page);
  await preview.waitFor({ state: "visible", timeout: 90000 });
  const rows = preview.locator(".monaco-list-row");
  await rows.first().waitFor({ state: "visible", timeout: 15000 });
  // group the preview by change type (annotation, when VS Code groups by file): each hunk
  // is an entry of its own
  result.rowsByFile = await rows.evaluateAll((items) => items.map((r) => (r.getAttribute("aria-label") ?? r.textContent ?? "").trim()));
  const hunkRows = preview.locator(".monaco-list-row", { hasText: "Hunk " });
  if ((await hunkRows.count()) === 0) {
    const toggle = page.locator(".action-label[aria-label*='Group Changes By Type'], .action-label[title*='Group Changes By Type']").first();
    if (await toggle.count()) {
      await toggle.click();
    }
  }
  await waitFor("hunk entries in the preview", 20000, async () => (await hunkRows.count()) >= 2);
  result.hunkRows = await hunkRows.evaluateAll((items) => items.map((r) => (r.textContent ?? "").replace(/\s+/g, " ").trim()));
  // a hunk (category) row has no checkbox: its file row, just below it, ticks its edits
  const texts = await rows.evaluateAll((items) => items.map((r) => (r.textContent ?? "").replace(/\s+/g, " ").trim()));
  result.rowsByType = texts;
  const boxBelow = (label) => {
    const index = texts.findIndex((t) => t.startsWith(label));
    return rows.nth(index + 1).locator(".monaco-custom-toggle.monaco-checkbox, input[type=checkbox]").first();
  };
  const box = boxBelow("Hunk 1 of hello.py");
  result.uncheckedAtStart = !(await isChecked(box));
  if (result.uncheckedAtStart) {
    await box.click();
  }
  result.secondTicked = await isChecked(boxBelow("Hunk 2 of hello.py"));
  if (screenshot) {
    await page.screenshot({ path: screenshot });
  }
  await applyPreview(page);
  step("preview applied with one hunk ticked");
  await page.locator(".tab", { hasText: "hello.py" }).first().click();
  result.editorText = await waitFor("editor shows hunk 1 only", 30000, async () => {
    const lines = await editorText(page, ACTIVE_EDITOR);
    return lines && lines[0] === "def welcome(name):" ? lines : null;
  });

  // the agent view: the file with its check before review
  await runCommand(page, "agentls: Open Agent View");
  const view = page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
  const checks = view.locator(".file .check");
  await waitFor("the file's check in the view", 30000, async () => (await checks.count()) >= 1);
  result.viewChecks = await checks.allTextContents();
}

await finish(() =>
  runSession(args, {
    tmpPrefix: "agentls-vscode-hunks-",
    prepare,
    viewport: { width: 1280, height: 800 },
    logTail: 4000,
    drive,
  }),
);
