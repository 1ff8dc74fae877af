// What every code-server end-to-end driver (run.mjs, code-intel.mjs, plan.mjs, notebook.mjs)
// shares: its command line, a scripted model + code-server (with the extension installed
// from the .vsix) + Debian's chromium driven by Playwright, the palette / Run Task /
// Refactor Preview steps, the failure report and the one JSON line each driver prints.
// One place, so a change to how code-server is started or shut down reaches every driver.
import { spawn, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const EXT = path.dirname(HERE);
const ROOT = path.resolve(EXT, "..", "..");
const CACHE = process.env.AGENTLS_EDITORS_DIR ?? path.join(os.homedir(), ".cache", "agentls-editors");

const started = Date.now();
const steps = [];
/** Processes to end at shutdown; `group` ones (code-server) with their whole process group. */
const children = [];

/** `--name VALUE` from the command line, else `fallback`. */
export function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/** The options every driver takes: --python --code-server --chromium --vsix --keep. */
export function parseArgs() {
  return {
    python: option("python", process.env.AGENTLS_PYTHON ?? path.join(ROOT, ".venv", "bin", "python")),
    codeServer: option(
      "code-server",
      process.env.CODE_SERVER ?? path.join(CACHE, "code-server-4.100.3", "node_modules", ".bin", "code-server"),
    ),
    chromiumPath: option("chromium", process.env.CHROMIUM ?? "/usr/bin/chromium"),
    vsix: option("vsix", path.join(EXT, "agentls.vsix")),
    keep: process.argv.includes("--keep"),
  };
}

/** Records a named step with the milliseconds since start (printed as `steps`). */
export function step(name) {
  steps.push({ name, ms: Date.now() - started });
}

/** Polls `predicate` until it returns something truthy (recorded as step `what`), or throws. */
export async function waitFor(what, ms, predicate) {
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

export function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
}

/** The user settings every driver starts from (a quiet, untrusted-workspace-free code-server
 * whose extension starts `agentls serve` logging into tmp/server.log). */
export function baseSettings(tmp) {
  return {
    "agentls.server.args": ["serve", "--log-file", path.join(tmp, "server.log"), "--log-level", "INFO"],
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": false,
    "chat.disableAIFeatures": true,
    "window.restoreWindows": "none",
  };
}

/** Writes a scripted model's scenario (turns of content blocks) to tmp/scenario.json; its path. */
/** A `prepare` for runSession with the sample fixture copied into the workspace, the quiet
 * editor settings the e2e drivers share, agentls in `mode`, and the scripted `scenario`. */
export function fixtureSession(mode, scenario) {
  return (tmp, workspace) => {
    fs.cpSync(path.join(HERE, "fixture"), workspace, { recursive: true });
    const settings = {
      ...baseSettings(tmp),
      "agentls.mode": mode,
      "workbench.tips.enabled": false,
      "extensions.autoUpdate": false,
      "extensions.ignoreRecommendations": true,
      "editor.minimap.enabled": false,
    };
    return { settings, scenario: writeScenario(tmp, scenario) };
  };
}

export function writeScenario(tmp, scenario) {
  const file = path.join(tmp, "scenario.json");
  fs.writeFileSync(file, JSON.stringify(scenario));
  return file;
}

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

/** Starts agentls.testing.scripted_server on `scenario`, recording to tmp/requests.jsonl;
 * resolves to its base URL. */
function startScriptedModel(python, tmp, scenario) {
  const proc = spawn(
    python,
    ["-m", "agentls.testing.scripted_server", "--scenario", scenario, "--record", path.join(tmp, "requests.jsonl")],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push({ proc, group: false });
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

/** Spawns code-server on a free port and waits for its health check; returns {port, log()}. */
async function startCodeServer(args, common, workspace, env) {
  const port = await freePort();
  const cs = spawn(
    args.codeServer,
    [...common, "--bind-addr", `127.0.0.1:${port}`, "--auth", "none", "--disable-telemetry", "--disable-update-check",
      "--disable-workspace-trust", "--disable-getting-started-override", workspace],
    { env, stdio: ["ignore", "pipe", "pipe"], detached: true }, // own process group: see shutdown
  );
  children.push({ proc: cs, group: true });
  let csLog = "";
  cs.stdout.on("data", (c) => (csLog += c));
  cs.stderr.on("data", (c) => (csLog += c));
  await waitFor("code-server up", 60000, async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
    } catch {
      return false; // not up yet
    }
  });
  return { port, log: () => csLog };
}

/** The failure half of a result: the error, a screenshot, the tails of both logs. */
async function reportFailure(result, err, { browser, tmp, csLog, logTail }) {
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
    result.serverLogTail = fs.readFileSync(serverLog, "utf8").slice(-logTail);
  }
}

/**
 * One end-to-end session: checks the tools exist, makes a temp folder (prefix `tmpPrefix`),
 * lets `prepare(tmp, workspace)` fill the workspace and return {settings, scenario} (the user
 * settings and the scripted model's scenario file), links the workspace's .venv/bin/agentls
 * to the python's, installs the .vsix, starts the model (step `modelStep` when given) and
 * code-server, opens the workspace in chromium (`viewport`; step "workbench loaded" unless
 * `workbenchStep` is null) and runs `drive({page, tmp, workspace, result})`. Returns the
 * result: ok, what `drive` added, or the failure report; tmp is removed on success unless --keep.
 */
export async function runSession(args, { tmpPrefix, prepare, viewport, drive, modelStep = null,
  workbenchStep = "workbench loaded", logTail = 3000 }) {
  for (const [what, file] of [["python", args.python], ["code-server", args.codeServer], ["chromium", args.chromiumPath], ["vsix", args.vsix]]) {
    if (!fs.existsSync(file)) {
      throw new Error(`${what} not found at ${file} (run scripts/editor-deps.sh and npm run package)`);
    }
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
  const result = { tmp };
  const workspace = path.join(tmp, "workspace");
  const { settings, scenario } = await prepare(tmp, workspace);
  fs.mkdirSync(path.join(workspace, ".venv", "bin"), { recursive: true });
  fs.symlinkSync(path.join(path.dirname(args.python), "agentls"), path.join(workspace, ".venv", "bin", "agentls"));
  const userData = path.join(tmp, "user-data");
  writeJson(path.join(userData, "User", "settings.json"), settings);
  const config = path.join(tmp, "config.yaml");
  fs.writeFileSync(config, "auth: none\ncert: false\n");
  const common = ["--user-data-dir", userData, "--extensions-dir", path.join(tmp, "extensions"), "--config", config];
  execFileSync(args.codeServer, [...common, "--install-extension", args.vsix], { stdio: "pipe", timeout: 120000 });
  step("extension installed");

  const modelUrl = await startScriptedModel(args.python, tmp, scenario);
  if (modelStep) {
    step(modelStep);
  }
  const env = { ...process.env, ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: "test", AGENTLS_TRANSCRIPT_DIR: path.join(tmp, "transcripts") };
  const cs = await startCodeServer(args, common, workspace, env);

  const browser = await chromium.launch({
    executablePath: args.chromiumPath,
    args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--no-first-run", "--disable-quic"],
  });
  try {
    const page = await browser.newPage({ viewport });
    await page.goto(`http://127.0.0.1:${cs.port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
    if (workbenchStep) {
      step(workbenchStep);
    }
    await drive({ page, tmp, workspace, result });
    result.ok = true;
  } catch (err) {
    await reportFailure(result, err, { browser, tmp, csLog: cs.log(), logTail });
  } finally {
    await browser.close();
  }
  if (result.ok && !args.keep) {
    fs.rmSync(tmp, { recursive: true, force: true });
    delete result.tmp;
  }
  return result;
}

/** Runs `main`, ends every child, prints the one JSON line {ok, ..., steps, seconds} and
 * exits 0 only when ok. */
export async function finish(main) {
  let outcome;
  try {
    outcome = await main();
  } catch (err) {
    outcome = { ok: false, error: err instanceof Error ? err.stack ?? err.message : String(err) };
  } finally {
    for (const { proc, group } of children) {
      try {
        // code-server forks helpers (file watcher, extension host): end its whole group.
        process.kill(group ? -proc.pid : proc.pid, "SIGTERM");
      } catch {
        proc.kill("SIGTERM");
      }
    }
  }
  outcome.steps = steps;
  outcome.seconds = Math.round((Date.now() - started) / 100) / 10;
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
  process.exit(outcome.ok ? 0 : 1);
}

/** Run a palette command; retries while the extension's contributions are still loading. */
export async function runCommand(page, label, ms = 60000) {
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

/** "agentls: Run Task…" with `task` typed into its input box (step `submittedStep` when given). */
export async function runTask(page, task, { timeout = 30000, submittedStep = "task submitted" } = {}) {
  await runCommand(page, "agentls: Run Task");
  const box = page.locator(".quick-input-widget input");
  await page.locator(".quick-input-widget", { hasText: "What should the agent do" }).waitFor({ state: "visible", timeout });
  await box.fill(task);
  await box.press("Enter");
  if (submittedStep) {
    step(submittedStep);
  }
}

/** The text of the active Monaco editor (its visible lines, in order); `scope` picks it. */
export async function editorText(page, scope = ".editor-instance") {
  return page.evaluate((selector) => {
    const editor = document.querySelector(`${selector} .monaco-editor .view-lines`);
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
  }, scope);
}

/** VS Code's Refactor Preview panel (review mode with change annotations opens it). */
export function refactorPreview(page) {
  return page.locator(".bulk-edit-panel, .refactor-preview, [id='workbench.panel.refactorPreview']").first();
}

/** Ticks every entry of the shown Refactor Preview (entries start unchecked); returns
 * {count, uncheckedAtStart, allChecked()}. */
export async function tickPreviewEntries(preview) {
  const boxes = preview.locator(".monaco-custom-toggle.monaco-checkbox, input[type=checkbox]");
  await boxes.first().waitFor({ state: "visible", timeout: 15000 });
  const isChecked = async (checkbox) =>
    (await checkbox.getAttribute("aria-checked")) === "true" || (await checkbox.evaluate((el) => el.checked === true));
  const count = await boxes.count();
  let uncheckedAtStart = 0;
  for (let i = 0; i < count; i++) {
    if (!(await isChecked(boxes.nth(i)))) {
      uncheckedAtStart += 1;
      await boxes.nth(i).click();
    }
  }
  const allChecked = async () => {
    for (let i = 0; i < count; i++) {
      if (!(await isChecked(boxes.nth(i)))) {
        return false;
      }
    }
    return true;
  };
  return { count, uncheckedAtStart, allChecked };
}

/** Clicks the Refactor Preview's Apply button. */
export async function applyPreview(page) {
  await page.locator(".monaco-button", { hasText: /^Apply$/ }).first().click();
}

/** The requests the scripted model recorded (tmp/requests.jsonl), parsed; [] before any. */
export function recordedRequests(tmp) {
  const file = path.join(tmp, "requests.jsonl");
  if (!fs.existsSync(file)) {
    return [];
  }
  return fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** The tool_result blocks the model got for its calls of `tool`, in call order (read from
 * the last recorded request, which carries the whole conversation); [] before any. */
export function toolResults(tmp, tool) {
  const requests = recordedRequests(tmp);
  const messages = requests.length ? requests[requests.length - 1].json?.messages ?? [] : [];
  const ids = new Set();
  const found = [];
  for (const message of messages) {
    for (const block of Array.isArray(message.content) ? message.content : []) {
      if (block.type === "tool_use" && block.name === tool) {
        ids.add(block.id);
      }
      if (block.type === "tool_result" && ids.has(block.tool_use_id)) {
        found.push(block);
      }
    }
  }
  return found;
}
