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
const screenshot = option("screenshot", null);
const keep = process.argv.includes("--keep");

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
  const scenario = path.join(tmp, "scenario.json");
  fs.writeFileSync(scenario, JSON.stringify(SCENARIO));
  const proc = spawn(
    python,
    ["-m", "agentls.testing.scripted_server", "--scenario", scenario, "--record", path.join(tmp, "requests.jsonl")],
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

/** The text of the active Monaco editor (its visible lines, in order). */
async function editorText(page) {
  return page.evaluate(() => {
    const editor = document.querySelector(".editor-group-container.active .monaco-editor .view-lines");
    if (!editor) {
      return null;
    }
    const lines = [...editor.querySelectorAll(".view-line")]
      .map((el) => ({ top: parseFloat(el.style.top || "0"), text: el.textContent.replace(/\u00a0/g, " ") }))
      .sort((a, b) => a.top - b.top);
    const text = lines.map((l) => l.text);
    while (text.length > 1 && text[text.length - 1] === "") {
      text.pop();
    }
    return text;
  });
}

/** The tool_result the model got for a call of `tool` (from the request log). */
function resultOf(tmp, tool) {
  const file = path.join(tmp, "requests.jsonl");
  if (!fs.existsSync(file)) {
    return null;
  }
  const requests = fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  for (const request of requests) {
    const messages = request.json?.messages ?? [];
    const ids = new Set();
    for (const message of messages) {
      for (const block of Array.isArray(message.content) ? message.content : []) {
        if (block.type === "tool_use" && block.name === tool) {
          ids.add(block.id);
        }
        if (block.type === "tool_result" && ids.has(block.tool_use_id)) {
          return block;
        }
      }
    }
  }
  return null;
}

async function main() {
  for (const [what, file] of [["python", python], ["code-server", codeServer], ["chromium", chromiumPath], ["vsix", vsix]]) {
    if (!fs.existsSync(file)) {
      throw new Error(`${what} not found at ${file} (run scripts/editor-deps.sh and npm run package)`);
    }
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agentls-vscode-plan-"));
  const result = { tmp };
  const workspace = path.join(tmp, "workspace");
  fs.cpSync(path.join(HERE, "fixture"), workspace, { recursive: true });
  fs.mkdirSync(path.join(workspace, ".venv", "bin"), { recursive: true });
  fs.symlinkSync(path.join(path.dirname(python), "agentls"), path.join(workspace, ".venv", "bin", "agentls"));
  const userData = path.join(tmp, "user-data");
  const extensions = path.join(tmp, "extensions");
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.writeFileSync(
    path.join(userData, "User", "settings.json"),
    JSON.stringify({
      "agentls.server.args": ["serve", "--log-file", path.join(tmp, "server.log"), "--log-level", "INFO"],
      "agentls.mode": "plan",
      "workbench.startupEditor": "none",
      "workbench.tips.enabled": false,
      "security.workspace.trust.enabled": false,
      "telemetry.telemetryLevel": "off",
      "update.mode": "none",
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "extensions.ignoreRecommendations": true,
      "chat.disableAIFeatures": true,
      "window.restoreWindows": "none",
      "editor.minimap.enabled": false,
    }),
  );
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
    { env, stdio: ["ignore", "pipe", "pipe"], detached: true }, // own process group: see cleanup
  );
  children.push(cs);
  let csLog = "";
  cs.stdout.on("data", (c) => (csLog += c));
  cs.stderr.on("data", (c) => (csLog += c));
  await waitFor("code-server up", 60000, async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
    } catch {
      return false;
    }
  });

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
    const entry = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "hello.py" }).first();
    await entry.waitFor({ state: "visible", timeout: 60000 });
    await entry.dblclick();
    await waitFor("hello.py open", 20000, async () => (await editorText(page))?.[0] === "def greet(name):");

    await runCommand(page, "agentls: Run Task");
    const widget = page.locator(".quick-input-widget");
    const input = widget.locator("input").first();
    await page.locator(".quick-input-widget", { hasText: "What should the agent do" }).waitFor({ state: "visible", timeout: 60000 });
    await input.fill("Rename greet to welcome");
    await input.press("Enter");
    step("task submitted");

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
    const preview = page.locator(".bulk-edit-panel, .refactor-preview, [id='workbench.panel.refactorPreview']").first();
    await preview.waitFor({ state: "visible", timeout: 60000 });
    const boxes = preview.locator(".monaco-custom-toggle.monaco-checkbox, input[type=checkbox]");
    await boxes.first().waitFor({ state: "visible", timeout: 15000 });
    const isChecked = async (checkbox) =>
      (await checkbox.getAttribute("aria-checked")) === "true" || (await checkbox.evaluate((el) => el.checked === true));
    const count = await boxes.count();
    for (let i = 0; i < count; i++) {
      if (!(await isChecked(boxes.nth(i)))) {
        await boxes.nth(i).click();
      }
    }
    await page.locator(".monaco-button", { hasText: /^Apply$/ }).first().click();
    step("preview applied");
    await page.locator(".tab", { hasText: "hello.py" }).first().click();
    result.editorText = await waitFor("editor shows the edit", 30000, async () => {
      const lines = await editorText(page);
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
      result.serverLogTail = fs.readFileSync(serverLog, "utf8").slice(-4000);
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
      process.kill(child.spawnargs[0] === python ? child.pid : -child.pid, "SIGTERM"); // code-server: its group
    } catch {
      child.kill("SIGTERM");
    }
  }
}
outcome.steps = steps;
outcome.seconds = Math.round((Date.now() - started) / 100) / 10;
process.stdout.write(`${JSON.stringify(outcome)}\n`);
process.exit(outcome.ok ? 0 : 1);
