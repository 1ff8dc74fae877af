#!/usr/bin/env node
// Notebook end to end in a real VS Code (code-server, headless Chromium, Playwright):
// opens sales.ipynb in the notebook editor, runs "agentls: Run Task…" against the scripted
// model (e2e/notebook-scenario.json: read_file, then notebook_edit of the cell "boom"),
// and checks that the change arrives as a cell edit in the open notebook (not a text edit
// of the .ipynb JSON) with the edited cell's outputs cleared, and that the notebook on
// disk is then valid with the new source (checked by tests/test_editor_vscode_notebook.py);
// then one undo in the notebook editor takes the whole edit back, outputs included.
//
// Usage: node e2e/notebook.mjs [--python PATH] [--code-server PATH] [--chromium PATH]
//                              [--vsix PATH] [--screenshot PATH] [--keep]
// Prints one JSON line {ok, steps, ...}; exit status 0 only when ok.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { HERE, baseSettings, finish, option, parseArgs, recordedRequests, runCommand, runSession, runTask, step, waitFor } from "./harness.mjs";

const args = parseArgs();
const screenshot = option("screenshot", path.join(os.tmpdir(), "agentls-notebook-e2e.png"));

/** The text of every code cell editor of the open notebook, in order. */
async function codeCells(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll(".notebook-editor .cell-list-container .code-cell-row .monaco-editor .view-lines")].map((lines) =>
      [...lines.querySelectorAll(".view-line")]
        .map((el) => ({ top: parseFloat(el.style.top || "0"), text: el.textContent.replace(/\u00a0/g, " ") }))
        .sort((a, b) => a.top - b.top)
        .map((l) => l.text)
        .join("\n"),
    ),
  );
}

/** Whether a cell output (rendered in the notebook's webview frames) shows `text`. */
async function outputShown(page, text) {
  for (const frame of page.frames()) {
    try {
      if (await frame.evaluate((t) => document.body?.innerText.includes(t) ?? false, text)) {
        return true;
      }
    } catch {
      // a frame that went away
    }
  }
  return false;
}

/** What the agent's read_file of the open notebook returned, from the scripted model's
 * recorded requests (so the test sees the editor's cells reached the agent). */
function readFileResult(tmp) {
  for (const request of recordedRequests(tmp)) {
    for (const message of request.json?.messages ?? []) {
      for (const block of Array.isArray(message.content) ? message.content : []) {
        const parts = Array.isArray(block.content) ? block.content : [{ text: block.content }];
        const text = block.type === "tool_result" ? parts.map((p) => p.text ?? "").join("") : "";
        if (text.includes("[notebook sales.ipynb")) {
          return text;
        }
      }
    }
  }
  return null;
}

/** A copy of e2e/notebook-fixture, .ipynb files opened in VS Code's notebook editor. */
function prepare(tmp, workspace) {
  fs.cpSync(path.join(HERE, "notebook-fixture"), workspace, { recursive: true });
  const settings = {
    ...baseSettings(tmp),
    "agentls.mode": "review",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "extensions.ignoreRecommendations": true,
    "notebook.lineNumbers": "off",
    "workbench.editorAssociations": { "*.ipynb": "jupyter-notebook" },
  };
  return { settings, scenario: path.join(HERE, "notebook-scenario.json") };
}

async function drive({ page, tmp, workspace, result }) {
  // the extension host and the server first (Show Status starts it), then the notebook
  await runCommand(page, "agentls: Show Status");
  await page.locator(".notifications-toasts .notification-list-item-message", { hasText: "agentls — " })
    .first().waitFor({ state: "visible", timeout: 90000 });
  step("server up");
  await runCommand(page, "Notifications: Clear All Notifications");
  const entry = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "sales.ipynb" }).first();
  await entry.waitFor({ state: "visible", timeout: 60000 });
  await entry.dblclick();
  result.cellsBefore = await waitFor("notebook open", 60000, async () => {
    const cells = await codeCells(page);
    return cells.some((c) => c.includes("1 / 0")) ? cells : null;
  });
  await runTask(page, "Fix the division by zero in the notebook");
  result.cellsAfter = await waitFor("cell edited in the notebook editor", 90000, async () => {
    const cells = await codeCells(page);
    return cells.some((c) => c.includes("total = 1 / 2")) ? cells : null;
  });
  result.errorOutputAfterEdit = await outputShown(page, "ZeroDivisionError"); // cleared in the editor too
  result.readFile = readFileResult(tmp);
  await page.screenshot({ path: screenshot });
  // the edit lives in the notebook's own model: saving writes it as a valid notebook
  await runCommand(page, "File: Save");
  result.saved = await waitFor("saved to disk", 30000, async () => {
    const text = fs.readFileSync(path.join(workspace, "sales.ipynb"), "utf8");
    return text.includes("total = 1 / 2") ? text : null;
  });
  // one notebook undo takes the agent's whole edit back (one NotebookEdit batch in the
  // notebook's own undo stack): the old source and the outputs it cleared return
  await page.keyboard.press("Escape"); // command mode: the notebook's undo, not a cell's
  let undos = 0;
  result.cellsUndone = await waitFor("agent edit undone", 30000, async () => {
    const cells = await codeCells(page);
    if (cells.some((c) => c.includes("1 / 0")) && !cells.some((c) => c.includes("total = 1 / 2")) && (await outputShown(page, "ZeroDivisionError"))) {
      return cells;
    }
    if (undos < 3) {
      undos += 1;
      await page.keyboard.press("Control+Z");
      await new Promise((r) => setTimeout(r, 1500));
    }
    return null;
  });
  result.undos = undos;
}

await finish(() =>
  runSession(args, {
    tmpPrefix: "agentls-notebook-e2e-",
    prepare,
    viewport: { width: 1280, height: 900 },
    workbenchStep: null,
    drive,
  }),
);
