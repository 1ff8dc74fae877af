#!/usr/bin/env node
// Code intelligence through the editor (source 1), in a real VS Code: code-server with the
// extension installed from the .vsix, driven by Playwright. A TypeScript project is opened;
// "agentls: Run Task…" runs the scripted model, whose one tool call is find_references on
// `greet`. The extension answers the server's `agentls/editorQuery` with
// `vscode.executeReferenceProvider`, i.e. code-server's built-in TypeScript features. The
// tool result the model got is read back from the scripted server's request log.
//
// Usage: node e2e/code-intel.mjs [--python PATH] [--code-server PATH] [--chromium PATH]
//                                [--vsix PATH] [--keep]
// Prints one JSON line {ok, toolResult, steps, ...}; exit status 0 only when ok.
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
const keep = process.argv.includes("--keep");

const FILES = {
  "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020"}, "include": ["src"]}\n',
  "src/greeter.ts": "export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n",
  "src/a.ts": 'import { greet } from "./greeter";\n\nexport const a = greet("a");\n',
  "src/b.ts": 'import { greet as hello } from "./greeter";\n\nexport const b = hello("b");\n',
};
const SCENARIO = {
  description: "code intelligence through the editor: one find_references call, then done",
  turns: [
    {
      content: [
        { type: "text", text: "Let me find the callers." },
        { type: "tool_use", name: "find_references", input: { path: "src/greeter.ts", line: 1, symbol: "greet" } },
      ],
    },
    { content: [{ type: "text", text: "greet is used in a.ts and b.ts." }] },
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

/** The tool_result blocks of the scripted model's second request (what the model was told). */
function toolResults(tmp) {
  const file = path.join(tmp, "requests.jsonl");
  if (!fs.existsSync(file)) {
    return null;
  }
  const requests = fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  if (requests.length < 2) {
    return null;
  }
  const messages = requests[1].json?.messages ?? [];
  const last = messages[messages.length - 1];
  const blocks = Array.isArray(last?.content) ? last.content.filter((b) => b.type === "tool_result") : [];
  return blocks.length ? blocks : null;
}

async function main() {
  for (const [what, file] of [["python", python], ["code-server", codeServer], ["chromium", chromiumPath], ["vsix", vsix]]) {
    if (!fs.existsSync(file)) {
      throw new Error(`${what} not found at ${file} (run scripts/editor-deps.sh and npm run package)`);
    }
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agentls-vscode-codeintel-"));
  const result = { tmp };
  const workspace = path.join(tmp, "workspace");
  for (const [name, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(workspace, name), text);
  }
  fs.mkdirSync(path.join(workspace, ".venv", "bin"), { recursive: true });
  fs.symlinkSync(path.join(path.dirname(python), "agentls"), path.join(workspace, ".venv", "bin", "agentls"));
  const userData = path.join(tmp, "user-data");
  const extensions = path.join(tmp, "extensions");
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.writeFileSync(
    path.join(userData, "User", "settings.json"),
    JSON.stringify({
      "agentls.server.args": ["serve", "--log-file", path.join(tmp, "server.log"), "--log-level", "INFO"],
      "agentls.mode": "review",
      "workbench.startupEditor": "none",
      "security.workspace.trust.enabled": false,
      "telemetry.telemetryLevel": "off",
      "update.mode": "none",
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "chat.disableAIFeatures": true,
      "window.restoreWindows": "none",
      "typescript.surveys.enabled": false,
      "typescript.tsserver.experimental.enableProjectDiagnostics": false,
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
    { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
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
    const page = await browser.newPage({ viewport: { width: 1200, height: 760 } });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
    step("workbench loaded");
    const row = (name) => page.locator(".explorer-folders-view .monaco-list-row", { hasText: name }).first();
    await row("src").waitFor({ state: "visible", timeout: 60000 });
    await row("src").click();
    await row("greeter.ts").waitFor({ state: "visible", timeout: 20000 });
    await row("greeter.ts").dblclick();
    const lines = page.locator(".editor-instance .monaco-editor .view-lines").first();
    const text = async () => ((await lines.textContent()) ?? "").replace(/\u00a0/g, " ");
    await waitFor("greeter.ts open", 20000, async () => (await text()).includes("export function greet"));

    // The editor's own TypeScript features first (as a user would): Go to References on
    // `greet` until its peek view lists the other files, so tsserver has loaded the project.
    await lines.click();
    await page.keyboard.press("Control+Home");
    for (let i = 0; i < 17; i++) {
      await page.keyboard.press("ArrowRight");
    }
    const peek = page.locator(".zone-widget .monaco-list-row", { hasText: "b.ts" }).first();
    await waitFor("the editor's references list b.ts", 90000, async () => {
      await page.keyboard.press("Shift+F12");
      try {
        await peek.waitFor({ state: "visible", timeout: 5000 });
        return true;
      } catch {
        return false;
      }
    });
    await page.keyboard.press("Escape");

    await runCommand(page, "agentls: Run Task");
    const box = page.locator(".quick-input-widget input");
    await page.locator(".quick-input-widget", { hasText: "What should the agent do" }).waitFor({ state: "visible", timeout: 60000 });
    await box.fill("Who calls greet?");
    await box.press("Enter");
    step("task submitted");
    const blocks = await waitFor("the model got the tool result", 90000, async () => toolResults(tmp));
    result.toolResult = blocks[0];
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
