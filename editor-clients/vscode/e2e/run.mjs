#!/usr/bin/env node
// End to end in a real VS Code: code-server (headless) with the extension installed from
// the .vsix, driven by Playwright (playwright-core + Debian's chromium). Opens a copy of
// e2e/fixture, runs "agentls: Run Task…" from the command palette against the scripted
// model, accepts the refactor preview (entries start unchecked), checks the editor text,
// saves, checks the file on disk, and writes a screenshot.
//
// Usage: node e2e/run.mjs [--python PATH] [--code-server PATH] [--chromium PATH]
//                         [--vsix PATH] [--screenshot PATH] [--keep]
// Prints one JSON line {ok, steps, ...}; exit status 0 only when ok.
import * as fs from "node:fs";
import * as path from "node:path";
import {
  HERE, EXT, applyPreview, baseSettings, editorText, finish, option, parseArgs, refactorPreview, runCommand, runSession,
  runTask, step, tickPreviewEntries, waitFor, writeJson,
} from "./harness.mjs";

const args = parseArgs();
const screenshot = option("screenshot", path.join(EXT, "e2e-screenshot.png"));
const viewScreenshot = option("view-screenshot", path.join(EXT, "agent-view.png"));

const STATUS_LABEL = "agentls run in progress, click to cancel"; // src/extension.ts
const EXPECTED = ['def welcome(name):', '    return "Hello, " + name', "", "", 'print(welcome("world"))'];

const workspaceSettings = (workspace) => path.join(workspace, ".vscode", "settings.json");

/** A copy of e2e/fixture. First a server command that does not exist (workspace setting; the
 * extension must say so clearly); then none, so the extension finds the server in the
 * workspace's .venv (a symlink here). (code-server does not notice edits of the user
 * settings file.) */
function prepare(tmp, workspace) {
  fs.cpSync(path.join(HERE, "fixture"), workspace, { recursive: true });
  writeJson(workspaceSettings(workspace), { "agentls.server.command": "/nonexistent/agentls" });
  const settings = {
    ...baseSettings(tmp),
    "agentls.mode": "review",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "extensions.autoUpdate": false,
    "extensions.ignoreRecommendations": true,
    "editor.minimap.enabled": false,
  };
  return { settings, scenario: path.join(HERE, "scenario.json") };
}

async function drive({ page, workspace, result }) {
  // Open hello.py from the Explorer (Quick Open's file search is slow on a busy machine).
  const entry = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "hello.py" }).first();
  await entry.waitFor({ state: "visible", timeout: 60000 });
  await entry.dblclick();
  await waitFor("hello.py open", 20000, async () => (await editorText(page))?.[0] === "def greet(name):");

  // A server that can't start: a clear error naming the setting.
  await runCommand(page, "agentls: Show Status");
  const startError = page.locator(".notifications-toasts .notification-list-item-message", { hasText: "agentls.server.command" });
  await startError.first().waitFor({ state: "visible", timeout: 30000 });
  result.startError = await startError.first().textContent();
  step("start error shown");
  writeJson(workspaceSettings(workspace), {}); // drop the bad command: the workspace .venv is found
  const statusToast = page.locator(".notifications-toasts .notification-list-item-message", { hasText: "agentls — " });
  const deadline = Date.now() + 60000;
  for (;;) { // until VS Code has read the changed settings file and the server starts
    await runCommand(page, "Notifications: Clear All Notifications");
    await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
    await runCommand(page, "agentls: Show Status");
    try {
      await statusToast.first().waitFor({ state: "visible", timeout: 10000 });
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        throw err;
      }
    }
  }
  step("server started from the workspace .venv");
  await runCommand(page, "Notifications: Clear All Notifications");
  await page.locator(".editor-instance .monaco-editor .view-lines").first().click();

  await runTask(page, "Rename greet to welcome");

  // Review mode with change annotations: VS Code opens the Refactor Preview.
  const preview = refactorPreview(page);
  await preview.waitFor({ state: "visible", timeout: 60000 });
  step("refactor preview shown");
  result.previewHtml = (await preview.innerHTML()).length;
  // Entries start unchecked: tick every checkbox in the preview tree, then Apply.
  const ticked = await tickPreviewEntries(preview);
  result.checkboxes = ticked.count;
  result.uncheckedAtStart = ticked.uncheckedAtStart;
  await waitFor("preview entries checked", 5000, ticked.allChecked);
  await page.screenshot({ path: screenshot });
  step("screenshot");
  await applyPreview(page);
  step("apply clicked");

  const text = await waitFor("editor shows the edit", 30000, async () => {
    const lines = await editorText(page);
    return lines && JSON.stringify(lines) === JSON.stringify(EXPECTED) ? lines : null;
  });
  result.editorText = text;
  await page.keyboard.press("Control+S");
  const file = path.join(workspace, "hello.py");
  await waitFor("file saved", 15000, async () => fs.readFileSync(file, "utf8") === `${EXPECTED.join("\n")}\n`);

  // The live view (output channel fed by agentls/event) and the status command.
  await runCommand(page, "agentls: Show Transcript");
  const output = page.locator(".part.panel .monaco-editor .view-lines");
  result.liveView = await waitFor("live view shows the tool call", 20000, async () => {
    const text = (await output.allTextContents()).join("\n").replace(/\u00a0/g, " ");
    return text.includes("→ Editing hello.py") && text.includes("== completed") ? text : null;
  });
  await page.locator(".editor-instance .monaco-editor .view-lines").first().click(); // focus back
  await runCommand(page, "agentls: Show Status");
  const toast = page.locator(".notifications-toasts .notification-list-item-message", { hasText: "agentls — " });
  await toast.first().waitFor({ state: "visible", timeout: 20000 });
  result.status = await toast.first().textContent();
  step("status shown");

  // The agent view: a run started from its prompt box streams into it; the preview is
  // discarded (both files stay staged, and a notification says so with its actions);
  // one file is accepted and the other rejected from the view.
  await runCommand(page, "Notifications: Clear All Notifications");
  await runCommand(page, "View: Hide Panel");
  await runCommand(page, "View: Close All Editors");
  await page.locator(".explorer-folders-view .monaco-list-row", { hasText: "hello.py" }).first().dblclick();
  await waitFor("hello.py open again", 20000, async () => (await editorText(page))?.[0] === "def welcome(name):");
  await runCommand(page, "agentls: Open Agent View");
  const view = page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
  const promptBox = view.locator("#prompt");
  await promptBox.waitFor({ state: "visible", timeout: 30000 });
  result.viewContext = await view.locator("#context").textContent();
  await promptBox.fill("Polish the greeting");
  await view.locator("#send").click();
  step("prompt sent from the view");
  await view.locator(".markdown strong", { hasText: "polish" }).first().waitFor({ timeout: 30000 });
  step("streamed Markdown in the view");
  const preview2 = refactorPreview(page);
  await preview2.waitFor({ state: "visible", timeout: 60000 });
  // during the preview: the run delivers its edits (not "⟳ completed" beside Cancel, not
  // the last tool's step in the status bar)
  result.headerDuringPreview = await view.locator(".header").first().textContent();
  result.statusDuringPreview = await page.locator(`[aria-label="${STATUS_LABEL}"]`).first().textContent();
  // file names in the answer are links to the file, never http://hello.py
  await view.locator(".markdown a.file-link", { hasText: "greeting.txt" }).first().waitFor({ timeout: 30000 });
  result.fileLinks = await view.locator(".markdown a.file-link").allTextContents();
  result.webLinks = await view.locator('.markdown a[href^="http"]').allTextContents();
  await page.locator(".monaco-button", { hasText: /^Discard$/ }).first().click();
  step("preview discarded");
  const discarded = page.locator(".notifications-toasts .notification-list-item", { hasText: "nothing was applied" }).first();
  await discarded.waitFor({ state: "visible", timeout: 30000 });
  result.discardNotice = await discarded.locator(".notification-list-item-message").textContent();
  result.discardActions = await discarded.locator(".monaco-button").allTextContents();
  step("discard reported");
  const toolHead = view.locator(".tool-head", { hasText: "Reading hello.py" }).first();
  result.toolLines = await view.locator(".tool-head").allTextContents();
  await toolHead.click();
  await view.locator(".tool-output", { hasText: "def welcome(name):" }).first().waitFor({ timeout: 20000 });
  result.toolOutput = await view.locator(".tool-output").first().textContent();
  step("tool output expanded");
  const greetingRow = view.locator(".file", { hasText: "greeting.txt" });
  const helloRow = view.locator(".file", { hasText: "hello.py" });
  await greetingRow.locator("button", { hasText: "Accept" }).waitFor({ timeout: 20000 });
  result.usageLine = await view.locator(".usage").textContent();
  await greetingRow.locator(".file-name").click(); // VS Code's diff editor for the file
  await page.locator(".tab", { hasText: "↔ agentls" }).first().waitFor({ timeout: 20000 });
  step("diff editor opened");
  await view.locator("#session").evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await page.screenshot({ path: viewScreenshot });
  step("view screenshot");
  await greetingRow.locator("button", { hasText: "Accept" }).click();
  await greetingRow.locator(".file-state", { hasText: "applied" }).waitFor({ timeout: 30000 });
  step("one file accepted in the view");
  await helloRow.locator("button", { hasText: "Reject" }).click();
  await helloRow.locator(".file-state", { hasText: "rejected" }).waitFor({ timeout: 30000 });
  step("one file rejected in the view");
  result.viewFiles = await view.locator(".file").allTextContents();
  result.viewText = await view.locator("#session").textContent();
  const lastRun = page.locator('[aria-label^="agentls: last run"]').first();
  result.statusAfterDecisions = await waitFor("status bar after the decisions", 20000, async () => {
    const text = await lastRun.textContent().catch(() => null);
    return text && text.includes("rejected 1 file(s)") ? text : null;
  });
  // a file link opens the file
  await view.locator(".markdown a.file-link", { hasText: "greeting.txt" }).first().click();
  await page.locator(".tab.active", { hasText: "greeting.txt" }).first().waitFor({ timeout: 20000 });
  step("a file link opened the file");
  await waitFor("greeting.txt written", 20000, async () => {
    await runCommand(page, "File: Save All").catch(() => undefined);
    return fs.readFileSync(path.join(workspace, "greeting.txt"), "utf8") === "Greetings from the fixture.\n";
  });
  if (!fs.readFileSync(file, "utf8").includes('"Hello, "')) {
    throw new Error("the rejected change reached hello.py");
  }
  await runCommand(page, "Notifications: Clear All Notifications");
  await runCommand(page, "View: Close All Editors");
  await page.locator(".part.editor").click({ position: { x: 200, y: 150 } }); // focus out of the webview

  // A third run hangs on the model; clicking the status-bar item cancels it.
  await runTask(page, "Add a docstring", { submittedStep: null });
  const item = page.locator(`[aria-label="${STATUS_LABEL}"]`).first();
  await item.waitFor({ state: "visible", timeout: 30000 });
  step("status-bar item shown");
  await item.click();
  await item.waitFor({ state: "hidden", timeout: 30000 });
  step("status-bar item gone after cancel");
  await runCommand(page, "agentls: Show Transcript");
  result.cancelView = await waitFor("live view shows the cancel", 60000, async () => {
    const text = (await output.allTextContents()).join("\n").replace(/\u00a0/g, " ");
    return text.includes("== cancelled") ? text : null;
  });
  if (fs.readFileSync(file, "utf8") !== `${EXPECTED.join("\n")}\n`) {
    throw new Error("the cancelled run changed hello.py");
  }
}

await finish(() =>
  runSession(args, {
    tmpPrefix: "agentls-vscode-e2e-",
    prepare,
    viewport: { width: 1280, height: 800 },
    modelStep: "scripted model up",
    drive,
  }),
);
