#!/usr/bin/env node
// Rewind in a real VS Code (issue 30): code-server with the extension from its .vsix, driven
// by Playwright. A review-mode session of two turns: turn 1 ("Run Task…") creates notes.txt,
// left staged (its Refactor Preview discarded); turn 2 (the agent view's prompt box, a
// follow-up) renames `greet` in hello.py and creates extra.txt, both left staged, and then
// hello.py is accepted from the view (applied). "agentls: Rewind to an Earlier Turn" lists
// both turns with their prompts and the files each changed; picking turn 1 drops turn 2's
// staged extra.txt and offers the reverse of the applied hello.py change in the Refactor
// Preview (a WorkspaceEdit), which is applied: hello.py is back as it was, and the staged
// diff holds notes.txt only.
//
// Usage: node e2e/rewind.mjs [--python PATH] [--code-server PATH] [--chromium PATH]
//                            [--vsix PATH] [--screenshot PATH] [--keep]
// Prints one JSON line {ok, ...}; exit status 0 only when ok.
import * as fs from "node:fs";
import * as path from "node:path";
import {
  fixtureSession,
  applyPreview, editorText, finish, option, parseArgs, refactorPreview, runCommand, runSession,
  runTask, step, tickPreviewEntries, waitFor,
} from "./harness.mjs";

const args = parseArgs();
const screenshot = option("screenshot", null);
const ACTIVE_EDITOR = ".editor-group-container.active";
const FIRST = "first prompt: add notes.txt";
const SECOND = "second prompt: rename greet and add extra.txt";
const ORIGINAL = ["def greet(name):", '    return "Hello, " + name', "", "", 'print(greet("world"))'];
const SCENARIO = {
  description: "VS Code e2e: two turns, then a rewind to turn 1",
  turns: [
    { content: [{ type: "tool_use", name: "write_file", input: { path: "notes.txt", content: "Notes.\n" } }] },
    { content: [{ type: "text", text: "Made notes." }] },
    {
      content: [
        { type: "tool_use", name: "edit_file", input: { path: "hello.py", old_string: "greet", new_string: "welcome", replace_all: true } },
        { type: "tool_use", name: "write_file", input: { path: "extra.txt", content: "Extra.\n" } },
      ],
    },
    { content: [{ type: "text", text: "Renamed and added extra." }] },
  ],
};

const prepare = fixtureSession("review", SCENARIO);

/** Discards the Refactor Preview a review-mode run ends with: its files stay staged. */
async function discardPreview(page, what) {
  await refactorPreview(page).waitFor({ state: "visible", timeout: 120000 });
  await page.locator(".monaco-button", { hasText: /^Discard$/ }).first().click();
  const notice = page.locator(".notifications-toasts .notification-list-item", { hasText: "nothing was applied" }).first();
  await notice.waitFor({ state: "visible", timeout: 30000 });
  step(`${what}: preview discarded, its files stay staged`);
  await runCommand(page, "Notifications: Clear All Notifications");
}

/** The rows of the quick pick now shown (their aria-labels). */
async function quickPickRows(page) {
  return page.locator(".quick-input-widget .quick-input-list .monaco-list-row")
    .evaluateAll((items) => items.map((r) => (r.getAttribute("aria-label") ?? r.textContent ?? "").replace(/\s+/g, " ").trim()));
}

/** "agentls: Show Staged Diff": the staged files it offers (a quick pick when there are
 * several, the diff editor's tab when there is one). */
async function stagedFiles(page) {
  await runCommand(page, "agentls: Show Staged Diff");
  const title = page.locator(".quick-input-widget .quick-input-title");
  const tab = page.locator(".tab", { hasText: "↔ agentls" }).first();
  return waitFor("the staged diff", 30000, async () => {
    if (await tab.isVisible().catch(() => false)) {
      const label = ((await tab.textContent()) ?? "").trim();
      await runCommand(page, "View: Close All Editors");
      return [label.split(" ↔ ")[0]];
    }
    if (((await title.textContent().catch(() => "")) ?? "").includes("staged files of session")) {
      const rows = await page.locator(".quick-input-widget .quick-input-list .monaco-list-row .label-name").allTextContents();
      if (rows.length) {
        await page.keyboard.press("Escape");
        return rows;
      }
    }
    return null;
  });
}

async function openHello(page) {
  const entry = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "hello.py" }).first();
  await entry.waitFor({ state: "visible", timeout: 60000 });
  await entry.dblclick();
  await waitFor("hello.py open", 20000, async () => (await editorText(page, ACTIVE_EDITOR))?.[0] === "def greet(name):");
}

async function drive({ page, workspace, result }) {
  await openHello(page);
  // turn 1: Run Task…; notes.txt stays staged
  await runTask(page, FIRST, { timeout: 60000 });
  await discardPreview(page, "turn 1");

  // turn 2: a follow-up from the agent view's prompt box; hello.py and extra.txt staged
  await runCommand(page, "agentls: Open Agent View");
  const view = page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
  const promptBox = view.locator("#prompt");
  await promptBox.waitFor({ state: "visible", timeout: 30000 });
  result.followUp = await view.locator("#follow-up").isChecked();
  await promptBox.fill(SECOND);
  await view.locator("#send").click();
  step("turn 2 sent from the view");
  await discardPreview(page, "turn 2");
  result.stagedBefore = await stagedFiles(page);

  // hello.py accepted from the view: applied to its buffer
  const helloRow = view.locator(".file", { hasText: "hello.py" }).first();
  await helloRow.locator("button", { hasText: "Accept" }).click();
  await helloRow.locator(".file-state", { hasText: "applied" }).waitFor({ timeout: 30000 });
  await runCommand(page, "File: Save All").catch(() => undefined);
  await page.locator(".tab", { hasText: "hello.py" }).first().click();
  result.helloAccepted = await waitFor("hello.py accepted", 30000, async () => {
    const lines = await editorText(page, ACTIVE_EDITOR);
    return lines && lines[0] === "def welcome(name):" ? lines : null;
  });
  await runCommand(page, "Notifications: Clear All Notifications");

  // the rewind: the turns with their prompts and files; turn 1 picked
  await runCommand(page, "agentls: Rewind to an Earlier Turn");
  const title = page.locator(".quick-input-widget .quick-input-title");
  result.pickTitle = await waitFor("the turns' quick pick", 30000, async () => {
    const text = (await title.textContent().catch(() => "")) ?? "";
    return text.includes("rewind session") ? text : null;
  });
  result.turnRows = await waitFor("both turns listed", 10000, async () => {
    const rows = await quickPickRows(page);
    return rows.length >= 2 ? rows : null;
  });
  if (screenshot) {
    await page.screenshot({ path: screenshot });
  }
  await page.locator(".quick-input-widget .quick-input-list .monaco-list-row", { hasText: FIRST }).first().click();
  step("turn 1 picked");

  // the reverse of the applied hello.py change, offered as a WorkspaceEdit in the preview
  const preview = refactorPreview(page);
  await preview.waitFor({ state: "visible", timeout: 60000 });
  const rows = preview.locator(".monaco-list-row");
  await rows.first().waitFor({ state: "visible", timeout: 15000 });
  result.reverseRows = await rows.evaluateAll((items) => items.map((r) => (r.textContent ?? "").replace(/\s+/g, " ").trim()));
  const ticked = await tickPreviewEntries(preview);
  await waitFor("reverse entries ticked", 5000, ticked.allChecked);
  await applyPreview(page);
  step("reverse applied");
  const done = page.locator(".notifications-toasts .notification-list-item-message", { hasText: "back at the end of turn 1" }).first();
  await done.waitFor({ state: "visible", timeout: 30000 });
  result.rewindMessage = ((await done.textContent()) ?? "").trim();
  await page.locator(".tab", { hasText: "hello.py" }).first().click();
  result.helloAfter = await waitFor("hello.py reversed", 30000, async () => {
    const lines = await editorText(page, ACTIVE_EDITOR);
    return lines && lines[0] === ORIGINAL[0] ? lines : null;
  });
  await runCommand(page, "Notifications: Clear All Notifications");
  result.stagedAfter = await stagedFiles(page);
  result.onDisk = {
    notes: fs.existsSync(path.join(workspace, "notes.txt")),
    extra: fs.existsSync(path.join(workspace, "extra.txt")),
  };
}

await finish(() =>
  runSession(args, {
    tmpPrefix: "agentls-vscode-rewind-",
    prepare,
    viewport: { width: 1280, height: 800 },
    logTail: 4000,
    drive,
  }),
);
