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
const screenshot = option("screenshot", path.join(os.tmpdir(), "agentls-notebook-e2e.png"));
const keep = process.argv.includes("--keep");
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
  const scenario = path.join(HERE, "notebook-scenario.json");
  const proc = spawn(python, ["-m", "agentls.testing.scripted_server", "--scenario", scenario, "--record", path.join(tmp, "requests.jsonl")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
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
      if ((await fetch(url)).ok) {
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

async function waitFor(what, ms, predicate) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await predicate();
    if (value) {
      step(what);
      return value;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

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
function readFileResult(recorded) {
  for (const line of fs.readFileSync(recorded, "utf8").split("\n").filter(Boolean)) {
    for (const message of JSON.parse(line).json?.messages ?? []) {
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

async function runCommand(page, label, ms = 60000) {
  const deadline = Date.now() + ms;
  const input = page.locator(".quick-input-widget input");
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: label }).first();
  for (let attempt = 0; ; attempt++) {
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
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agentls-notebook-e2e-"));
  const result = { tmp };
  const workspace = path.join(tmp, "workspace");
  fs.cpSync(path.join(HERE, "notebook-fixture"), workspace, { recursive: true });
  const notebookFile = path.join(workspace, "sales.ipynb");
  fs.mkdirSync(path.join(workspace, ".venv", "bin"), { recursive: true });
  fs.symlinkSync(path.join(path.dirname(python), "agentls"), path.join(workspace, ".venv", "bin", "agentls"));
  const userData = path.join(tmp, "user-data");
  const extensions = path.join(tmp, "extensions");
  writeJson(path.join(userData, "User", "settings.json"), {
    "agentls.server.args": ["serve", "--log-file", path.join(tmp, "server.log"), "--log-level", "INFO"],
    "agentls.mode": "review",
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": false,
    "extensions.ignoreRecommendations": true,
    "chat.disableAIFeatures": true,
    "window.restoreWindows": "none",
    "notebook.lineNumbers": "off",
    "workbench.editorAssociations": { "*.ipynb": "jupyter-notebook" },
  });
  const config = path.join(tmp, "config.yaml");
  fs.writeFileSync(config, "auth: none\ncert: false\n");
  const common = ["--user-data-dir", userData, "--extensions-dir", extensions, "--config", config];
  execFileSync(codeServer, [...common, "--install-extension", vsix], { stdio: "pipe", timeout: 120000 });
  step("extension installed");
  const modelUrl = await startScriptedModel(tmp);
  const port = await freePort();
  const env = { ...process.env, ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: "test", AGENTLS_TRANSCRIPT_DIR: path.join(tmp, "transcripts") };
  const cs = spawn(
    codeServer,
    [...common, "--bind-addr", `127.0.0.1:${port}`, "--auth", "none", "--disable-telemetry", "--disable-update-check",
      "--disable-workspace-trust", "--disable-getting-started-override", workspace],
    { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
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
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
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
    await runCommand(page, "agentls: Run Task");
    const box = page.locator(".quick-input-widget input");
    await page.locator(".quick-input-widget", { hasText: "What should the agent do" }).waitFor({ state: "visible", timeout: 30000 });
    await box.fill("Fix the division by zero in the notebook");
    await box.press("Enter");
    step("task submitted");
    result.cellsAfter = await waitFor("cell edited in the notebook editor", 90000, async () => {
      const cells = await codeCells(page);
      return cells.some((c) => c.includes("total = 1 / 2")) ? cells : null;
    });
    result.errorOutputAfterEdit = await outputShown(page, "ZeroDivisionError"); // cleared in the editor too
    result.readFile = readFileResult(path.join(tmp, "requests.jsonl"));
    await page.screenshot({ path: screenshot });
    // the edit lives in the notebook's own model: saving writes it as a valid notebook
    await runCommand(page, "File: Save");
    result.saved = await waitFor("saved to disk", 30000, async () => {
      const text = fs.readFileSync(notebookFile, "utf8");
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
    result.ok = true;
  } catch (err) {
    result.ok = false;
    result.error = err instanceof Error ? err.stack ?? err.message : String(err);
    try {
      const pages = browser.contexts()[0]?.pages() ?? [];
      if (pages[0]) {
        result.failureScreenshot = path.join(tmp, "failure.png");
        await pages[0].screenshot({ path: result.failureScreenshot });
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
