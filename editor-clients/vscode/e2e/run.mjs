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
import { spawn, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const EXT = path.dirname(HERE);
const ROOT = path.resolve(EXT, "..", "..");
const CACHE = process.env.AGENTLS_EDITORS_DIR ?? path.join(os.homedir(), ".cache", "agentls-editors");

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const python = option("python", process.env.AGENTLS_PYTHON ?? path.join(ROOT, ".venv", "bin", "python"));
const codeServer = option(
  "code-server",
  process.env.CODE_SERVER ?? path.join(CACHE, "code-server-4.100.3", "node_modules", ".bin", "code-server"),
);
const chromiumPath = option("chromium", process.env.CHROMIUM ?? "/usr/bin/chromium");
const vsix = option("vsix", path.join(EXT, "agentls.vsix"));
const screenshot = option("screenshot", path.join(EXT, "e2e-screenshot.png"));
const viewScreenshot = option("view-screenshot", path.join(EXT, "agent-view.png"));
const keep = process.argv.includes("--keep");

const STATUS_LABEL = "agentls run in progress, click to cancel"; // src/extension.ts
const EXPECTED = ['def welcome(name):', '    return "Hello, " + name', "", "", 'print(welcome("world"))'];
const started = Date.now();
const steps = [];
const step = (name) => steps.push({ name, ms: Date.now() - started });
const children = [];

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

function startScriptedModel(tmp) {
  const proc = spawn(
    python,
    ["-m", "agentls.testing.scripted_server", "--scenario", path.join(HERE, "scenario.json"), "--record", path.join(tmp, "requests.jsonl")],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(proc);
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`scripted server did not start: ${out}`)), 20000);
    proc.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    proc.on("exit", (code) => reject(new Error(`scripted server exited ${code}: ${out}`)));
  });
}

async function waitForHttp(url, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok) {
        return;
      }
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within ${ms} ms`);
}

function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
}

/** The text of the active Monaco editor (its visible lines, in order). */
async function editorText(page) {
  return page.evaluate(() => {
    const editor = document.querySelector(".editor-instance .monaco-editor .view-lines");
    if (!editor) {
      return null;
    }
    const lines = [...editor.querySelectorAll(".view-line")]
      .map((el) => ({ top: parseFloat(el.style.top || "0"), text: el.textContent.replace(/\u00a0/g, " ") }))
      .sort((a, b) => a.top - b.top);
    const text = lines.map((l) => l.text);
    while (text.length > 1 && text[text.length - 1] === "") {
      text.pop(); // the empty line after the final newline
    }
    return text;
  });
}

async function waitFor(what, ms, predicate) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    last = await predicate();
    if (last) {
      step(what);
      return last;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

/** Run a palette command; retries while the extension's contributions are still loading. */
async function runCommand(page, label, ms = 60000) {
  const deadline = Date.now() + ms;
  const input = page.locator(".quick-input-widget input");
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: label }).first();
  for (let attempt = 0; ; attempt++) {
    // F1 does not reach the workbench from every focused part (e.g. the output view).
    await page.keyboard.press(attempt % 2 === 0 ? "F1" : "Control+Shift+P");
    try {
      await input.waitFor({ state: "visible", timeout: 3000 });
      await input.fill(`>${label}`);
      await row.waitFor({ state: "visible", timeout: 3000 });
      await input.press("Enter");
      return;
    } catch (err) {
      if (Date.now() > deadline) {
        throw err;
      }
      await page.keyboard.press("Escape");
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function main() {
  for (const [what, file] of [["python", python], ["code-server", codeServer], ["chromium", chromiumPath], ["vsix", vsix]]) {
    if (!fs.existsSync(file)) {
      throw new Error(`${what} not found at ${file} (run scripts/editor-deps.sh and npm run package)`);
    }
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agentls-vscode-e2e-"));
  const result = { tmp };
  const workspace = path.join(tmp, "workspace");
  fs.cpSync(path.join(HERE, "fixture"), workspace, { recursive: true });
  const userData = path.join(tmp, "user-data");
  const extensions = path.join(tmp, "extensions");
  const agentlsBin = path.join(path.dirname(python), "agentls");
  // First a server command that does not exist (workspace setting; the extension must say
  // so clearly); then none, so the extension finds the server in the workspace's .venv
  // (a symlink here). (code-server does not notice edits of the user settings file.)
  fs.mkdirSync(path.join(workspace, ".venv", "bin"), { recursive: true });
  fs.symlinkSync(agentlsBin, path.join(workspace, ".venv", "bin", "agentls"));
  const settingsFile = path.join(userData, "User", "settings.json");
  const settings = {
    "agentls.server.args": ["serve", "--log-file", path.join(tmp, "server.log"), "--log-level", "INFO"],
    "agentls.mode": "review",
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "extensions.ignoreRecommendations": true,
    "chat.disableAIFeatures": true,
    "window.restoreWindows": "none",
    "editor.minimap.enabled": false,
  };
  writeJson(settingsFile, settings);
  const workspaceSettings = path.join(workspace, ".vscode", "settings.json");
  writeJson(workspaceSettings, { "agentls.server.command": "/nonexistent/agentls" });
  const config = path.join(tmp, "config.yaml");
  fs.writeFileSync(config, "auth: none\ncert: false\n");
  const common = ["--user-data-dir", userData, "--extensions-dir", extensions, "--config", config];

  execFileSync(codeServer, [...common, "--install-extension", vsix], { stdio: "pipe", timeout: 120000 });
  step("extension installed");

  const modelUrl = await startScriptedModel(tmp);
  step("scripted model up");
  const port = await freePort();
  const env = { ...process.env, ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: "test", AGENTLS_TRANSCRIPT_DIR: path.join(tmp, "transcripts") };
  const cs = spawn(
    codeServer,
    [...common, "--bind-addr", `127.0.0.1:${port}`, "--auth", "none", "--disable-telemetry", "--disable-update-check",
      "--disable-workspace-trust", "--disable-getting-started-override", workspace],
    { env, stdio: ["ignore", "pipe", "pipe"], detached: true }, // own process group: see cleanup
  );
  children.push(cs);
  let csLog = "";
  cs.stdout.on("data", (c) => (csLog += c));
  cs.stderr.on("data", (c) => (csLog += c));
  await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60000);
  step("code-server up");

  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--no-first-run", "--disable-quic"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
    step("workbench loaded");

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
    writeJson(workspaceSettings, {}); // drop the bad command: the workspace .venv is found
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

    await runCommand(page, "agentls: Run Task");
    const box = page.locator(".quick-input-widget input");
    await page.locator(".quick-input-widget", { hasText: "What should the agent do" }).waitFor({ state: "visible", timeout: 30000 });
    await box.fill("Rename greet to welcome");
    await box.press("Enter");
    step("task submitted");

    // Review mode with change annotations: VS Code opens the Refactor Preview.
    const preview = page.locator(".bulk-edit-panel, .refactor-preview, [id='workbench.panel.refactorPreview']").first();
    await preview.waitFor({ state: "visible", timeout: 60000 });
    step("refactor preview shown");
    result.previewHtml = (await preview.innerHTML()).length;
    // Entries start unchecked: tick every checkbox in the preview tree, then Apply.
    const boxes = preview.locator(".monaco-custom-toggle.monaco-checkbox, input[type=checkbox]");
    await boxes.first().waitFor({ state: "visible", timeout: 15000 });
    const isChecked = async (checkbox) =>
      (await checkbox.getAttribute("aria-checked")) === "true" || (await checkbox.evaluate((el) => el.checked === true));
    const count = await boxes.count();
    result.checkboxes = count;
    result.uncheckedAtStart = 0;
    for (let i = 0; i < count; i++) {
      const checkbox = boxes.nth(i);
      if (!(await isChecked(checkbox))) {
        result.uncheckedAtStart += 1;
        await checkbox.click();
      }
    }
    await waitFor("preview entries checked", 5000, async () => {
      for (let i = 0; i < count; i++) {
        if (!(await isChecked(boxes.nth(i)))) {
          return false;
        }
      }
      return true;
    });
    await page.screenshot({ path: screenshot });
    step("screenshot");
    await page.locator(".monaco-button", { hasText: /^Apply$/ }).first().click();
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
    const preview2 = page.locator(".bulk-edit-panel, .refactor-preview, [id='workbench.panel.refactorPreview']").first();
    await preview2.waitFor({ state: "visible", timeout: 60000 });
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
    await runCommand(page, "agentls: Run Task");
    await page.locator(".quick-input-widget", { hasText: "What should the agent do" }).waitFor({ state: "visible", timeout: 30000 });
    await box.fill("Add a docstring");
    await box.press("Enter");
    const item = page.locator(`[aria-label="${STATUS_LABEL}"]`).first();
    await item.waitFor({ state: "visible", timeout: 30000 });
    step("status-bar item shown");
    await item.click();
    await item.waitFor({ state: "hidden", timeout: 30000 });
    step("status-bar item gone after cancel");
    await runCommand(page, "agentls: Show Transcript");
    result.cancelView = await waitFor("live view shows the cancel", 20000, async () => {
      const text = (await output.allTextContents()).join("\n").replace(/\u00a0/g, " ");
      return text.includes("== cancelled") ? text : null;
    });
    if (fs.readFileSync(file, "utf8") !== `${EXPECTED.join("\n")}\n`) {
      throw new Error("the cancelled run changed hello.py");
    }
    result.ok = true;
  } catch (err) {
    result.ok = false;
    result.error = err instanceof Error ? err.stack ?? err.message : String(err);
    try {
      const pages = browser.contexts()[0]?.pages() ?? [];
      if (pages[0]) {
        const failure = path.join(tmp, "failure.png");
        await pages[0].screenshot({ path: failure });
        result.failureScreenshot = failure;
      }
    } catch {
      // best effort
    }
    result.codeServerLog = csLog.slice(-3000);
    const serverLog = path.join(tmp, "server.log");
    if (fs.existsSync(serverLog)) {
      result.serverLogTail = fs.readFileSync(serverLog, "utf8").slice(-3000);
    }
  } finally {
    await browser.close();
  }
  if (result.ok && !keep) {
    fs.rmSync(tmp, { recursive: true, force: true });
    delete result.tmp;
  }
  return result;
}

let outcome;
try {
  outcome = await main();
} catch (err) {
  outcome = { ok: false, error: err instanceof Error ? err.stack ?? err.message : String(err) };
} finally {
  for (const child of children) {
    try {
      // code-server forks helpers (file watcher, extension host): end its whole group.
      process.kill(child.spawnargs[0] === python ? child.pid : -child.pid, "SIGTERM");
    } catch {
      child.kill("SIGTERM");
    }
  }
}
outcome.steps = steps;
outcome.seconds = Math.round((Date.now() - started) / 100) / 10;
process.stdout.write(`${JSON.stringify(outcome)}\n`);
process.exit(outcome.ok ? 0 : 1);
