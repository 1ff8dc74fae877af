-- End-to-end test inside a real headless Neovim (run by run_e2e.py, not by hand).
--
-- Env: AGENTLS_E2E_CASE (edit | cancel), AGENTLS_E2E_WORKSPACE (a copy of fixture/),
-- AGENTLS_E2E_RESULT (JSON written here), AGENTLS_E2E_CMD (server command, JSON list).
-- The scripted model's URL arrives in ANTHROPIC_BASE_URL, inherited by the server.
vim.cmd("filetype on") -- as in any user config (vim.lsp.enable attaches on FileType)
local case = os.getenv("AGENTLS_E2E_CASE")
local workspace = os.getenv("AGENTLS_E2E_WORKSPACE")
local result_path = os.getenv("AGENTLS_E2E_RESULT")
local cmd = vim.fn.json_decode(os.getenv("AGENTLS_E2E_CMD"))

local ORIGINAL = {
  "def greet(name):",
  '    return "Hello, " + name',
  "",
  "",
  'print(greet("world"))',
}
local RENAMED = {
  "def welcome(name):",
  '    return "Hello, " + name',
  "",
  "",
  'print(welcome("world"))',
}

local server_messages = {} -- window/showMessage texts from the server
local echoes = {} -- what the plugin echoed (progress lines)
local original_echo = vim.api.nvim_echo
vim.api.nvim_echo = function(chunks, history, opts)
  local text = {}
  for _, chunk in ipairs(chunks) do
    table.insert(text, chunk[1])
  end
  table.insert(echoes, table.concat(text))
  return original_echo(chunks, history, opts)
end
local notifications = {} -- everything vim.notify showed
local steps = {}
local function step(name)
  table.insert(steps, { name = name, t = vim.loop.hrtime() / 1e6 })
end

local function finish(ok, err, extra)
  local agentls = package.loaded["agentls"]
  local out = {
    ok = ok,
    error = err,
    case = case,
    nvim = tostring(vim.version().major) .. "." .. vim.version().minor .. "." .. vim.version().patch,
    start_method = agentls and agentls.start_method or nil,
    steps = steps,
    log = agentls and agentls.log.lines() or {},
    messages = vim.split(vim.fn.execute("messages"), "\n"),
    all_notifications = notifications,
    echoes = echoes,
  }
  for k, v in pairs(extra or {}) do
    out[k] = v
  end
  vim.fn.writefile({ vim.fn.json_encode(out) }, result_path)
  vim.cmd("qall!")
end

local function wait_for(what, ms, predicate)
  if not vim.wait(ms, predicate, 50) then
    error("timed out after " .. ms .. " ms waiting for " .. what, 0)
  end
  step(what)
end

local function same(a, b)
  return vim.deep_equal(a, b)
end

local function buffer_lines()
  return vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

local function disk_lines(path)
  return vim.fn.readfile(path)
end

local function unit_case()
  -- No server needed: selections → UTF-16 ranges, diagnostics → a fix prompt.
  local commands = require("agentls.commands")
  require("agentls").setup({ autostart = false })
  vim.cmd("enew")
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'x = "é😀z"', "second line" })
  vim.cmd('normal! 0f"lvll\27')
  local charwise = commands.range_of({ range = 2, line1 = 1, line2 = 1 })
  vim.cmd("normal! ggVj\27")
  local linewise = commands.range_of({ range = 2, line1 = 1, line2 = 2 })
  local ns = vim.api.nvim_create_namespace("agentls-e2e")
  vim.diagnostic.set(ns, 0, {
    { lnum = 1, col = 0, message = "undefined name 'second'", source = "pyflakes", severity = vim.diagnostic.severity.ERROR },
  })
  local prompt = commands.fix_prompt(0, 2, 2)
  local none = commands.fix_prompt(0, 1, 1)
  local checks = {
    charwise = vim.deep_equal(charwise, { start = { line = 0, character = 5 }, ["end"] = { line = 0, character = 9 } }),
    linewise = vim.deep_equal(linewise, { start = { line = 0, character = 0 }, ["end"] = { line = 1, character = 11 } }),
    fix_prompt = prompt == "Fix these diagnostics:\n- line 2: undefined name 'second' [pyflakes]",
    no_diagnostics = none == nil,
    commands = vim.fn.exists(":AgentlsRun") == 2 and vim.fn.exists(":AgentlsStatus") == 2,
  }
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/hello.py"))
  local bad = require("agentls.client").attach(0, { cmd = { "/nonexistent/agentls", "serve" } })
  vim.wait(100)
  checks.clear_start_error = bad == nil
    and vim.fn.execute("messages"):find("`/nonexistent/agentls` is not an executable", 1, true) ~= nil
  local lspconfig = require("agentls").lspconfig({ cmd = { "agentls", "serve" } })
  checks.lspconfig_form = type(lspconfig.root_dir) == "function"
    and vim.deep_equal(lspconfig.cmd, { "agentls", "serve" })
    and type(lspconfig.handlers["agentls/event"]) == "function"
    and lspconfig.name == nil
  local status_lines = require("agentls.status").lines({
    model = "claude-x", endpoint = "https://api.anthropic.com", mode = "review",
    sessions = { { id = "abc", status = "completed", turns = 2, running = false } },
    sandbox = { enabled = true, available = false, backend = vim.NIL, message = "bubblewrap is not installed.",
      fix = "sudo apt install bubblewrap", network = "off", limits = "", fallback = { run_command = "refuse", lint = "ask" } },
    trust = { state = "pending", trusted = false,
      held_back = { { source = ".agentls.toml", setting = "hooks", detail = "PreToolUse: ./check.sh" } } },
    code_intel = {
      { source = "editor", state = "unavailable", reason = "the editor did not announce agentls/editorQuery" },
      { source = "language server", language = "python", server = "basedpyright", state = "running", origin = "PATH", pid = 42 },
      { source = "language server", language = "go", server = vim.NIL, state = "unavailable", reason = "gopls not found on PATH" },
    },
  })
  -- a long outcome with line breaks, as Neovim's own vim.notify will show it: one line that
  -- fits (no "Press ENTER"); the server's "agentls: " title is not said twice
  local long = require("agentls.outcomes").describe_edit(
    { files = { "file:///w/a.py", "file:///w/b.py", "file:///w/c.py" }, applied = true,
      left_out = { { uri = "file:///w/b.py", reason = "the changes overlap\nwith yours" } } },
    "0123456789ab",
    "run"
  )
  local line = require("agentls.compat").one_line(long .. "\nsecond line")
  checks.one_line = not line:find("\n", 1, true) and vim.fn.strdisplaywidth(line) < vim.v.echospace
    and line:find("^agentls: applied 3 file%(s%)") ~= nil
  local shown = table.concat(status_lines, "\n")
  checks.status_view = shown:find("    python: basedpyright running from PATH, pid 42", 1, true) ~= nil
    and shown:find("    go: unavailable — gopls not found on PATH", 1, true) ~= nil
    and shown:find("  sandbox: unavailable — bubblewrap is not installed.", 1, true) ~= nil
    and shown:find("    fix: sudo apt install bubblewrap", 1, true) ~= nil
    and shown:find("    without it: lint: ask, run_command: refuse", 1, true) ~= nil
    and shown:find("    held back: hooks: PreToolUse: ./check.sh (.agentls.toml)", 1, true) ~= nil
  for name, passed in pairs(checks) do
    if not passed then
      error(("unit check %s failed: %s"):format(name, vim.inspect({ charwise, linewise, prompt, status_lines })), 0)
    end
  end
  return { checks = checks }
end


-- Shared by the cases below ----------------------------------------------------------------

-- loaded first, so it knows Neovim's own vim.notify: the wrapper below is a notification
-- plugin to it (messages reach it whole; the one-line cut is checked in the unit case)
require("agentls.compat")
local original_notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(notifications, tostring(msg))
  return original_notify(msg, level, opts)
end
local show_message = vim.lsp.handlers["window/showMessage"]
vim.lsp.handlers["window/showMessage"] = function(err, result, ctx, config)
  if type(result) == "table" then
    table.insert(server_messages, tostring(result.message))
  end
  return show_message(err, result, ctx, config)
end

function wait_client()
  local agentls = require("agentls")
  wait_for("client initialized", 30000, function()
    local c = agentls.client()
    return c ~= nil
      and c.initialized ~= false
      and not require("agentls.compat").is_stopped(c)
      and c.server_capabilities ~= nil
      and next(c.server_capabilities) ~= nil
  end)
end

local function settle(ms)
  vim.wait(ms or 200, function()
    return false
  end, 20)
end

--- Start a run with :AgentlsRun and wait until its result (edits delivered) arrived.
local function run(prompt)
  local log = require("agentls.log")
  local before = log.last_session
  vim.cmd("AgentlsRun " .. prompt)
  wait_for("session started", 45000, function()
    return log.last_session ~= nil and log.last_session ~= before
  end)
  local session = log.last_session
  wait_for("run result", 60000, function()
    return log.sessions[session] and log.sessions[session].running == false
  end)
  return session
end

local function modified_buffers()
  local names = {}
  for _, info in ipairs(vim.fn.getbufinfo({ bufmodified = 1 })) do
    if vim.bo[info.bufnr].buftype == "" then -- what :qa would refuse to abandon (E37)
      table.insert(names, info.name)
    end
  end
  return names
end

local function notified(pattern)
  for _, text in ipairs(notifications) do
    if text:find(pattern, 1, true) then
      return text
    end
  end
  return nil
end

local function start(settings)
  local agentls = require("agentls")
  agentls.setup({ cmd = cmd, settings = settings or { mode = "review" }, root_dir = workspace })
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/hello.py"))
  wait_client()
  return agentls
end

local function health_lines()
  vim.cmd("checkhealth agentls")
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd("bwipeout!")
  return lines
end

NEW_CASES = {}

-- Bug 1: files the agent creates, renames or deletes can be accepted; accepted files are
-- saved, so no hidden modified buffer is left (:qa would fail with E37).
NEW_CASES.resource = function()
  vim.fn.writefile({ "OLD = 1" }, workspace .. "/old.py")
  vim.fn.writefile({ "GONE = 1" }, workspace .. "/gone.py")
  local agentls = start({ mode = "review", allowedTools = { "write_file", "rename_file", "delete_file", "edit_file" } })
  local session = run("Reorganise the files")
  local staged = require("agentls.log").sessions[session].edit
  settle(100)
  local accepted = nil
  agentls.accept(session, nil, function(r)
    accepted = r
  end)
  wait_for("accept answered", 15000, function()
    return accepted ~= nil
  end)
  wait_for("accept reported", 5000, function()
    return notified("agentls: applied") ~= nil or notified("nothing was applied") ~= nil
  end)
  return {
    staged = staged,
    accepted = accepted,
    disk = {
      new = vim.fn.filereadable(workspace .. "/pkg/new.py") == 1 and vim.fn.readfile(workspace .. "/pkg/new.py") or false,
      moved = vim.fn.filereadable(workspace .. "/moved.py") == 1 and vim.fn.readfile(workspace .. "/moved.py") or false,
      old = vim.fn.filereadable(workspace .. "/old.py") == 1,
      gone = vim.fn.filereadable(workspace .. "/gone.py") == 1,
      hello = vim.fn.readfile(workspace .. "/hello.py"),
    },
    buffer = buffer_lines(),
    modified = modified_buffers(),
    notifications = notifications,
  }
end

-- The session side buffer, :AgentlsDiff (reject one file, accept the other), saving, and
-- :checkhealth agentls with a running server.
NEW_CASES.review = function()
  vim.fn.writefile({ "VERSION = 1" }, workspace .. "/version.py")
  local agentls = start({ mode = "review" })
  local session = run("Rename greet and bump the version")
  local view = require("agentls.view")
  -- the todo tool comes later: its event is rendered as the server will send it
  require("agentls.log").on_event(nil, {
    type = "todos",
    session_id = session,
    todos = {
      { content = "Rename greet", status = "completed", active_form = "Renaming greet" },
      { content = "Bump the version", status = "in_progress", active_form = "Bumping the version" },
      { content = "Run the tests", status = "pending", active_form = "Running the tests" },
    },
  })
  local view_lines = view.lines(session)
  local view_open = false
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)):find("agentls://session/" .. session, 1, true) then
      view_open = true
    end
  end
  -- <CR> on the read_file line shows its output (fetched with agentls.toolResult)
  local view_buf = vim.fn.bufnr("agentls://session/" .. session)
  local view_win = vim.fn.bufwinid(view_buf)
  local tool_row = nil
  for i, line in ipairs(view_lines) do
    if line:find("Reading hello.py", 1, true) then
      tool_row = i
    end
  end
  local current_win = vim.api.nvim_get_current_win()
  vim.api.nvim_set_current_win(view_win)
  vim.api.nvim_win_set_cursor(view_win, { tool_row, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  wait_for("tool output shown", 10000, function()
    for _, line in ipairs(view.lines(session)) do
      if line:find("│ .*def greet") then
        return true
      end
    end
    return false
  end)
  local expanded = view.lines(session)
  vim.api.nvim_set_current_win(current_win)

  -- :AgentlsDiff opens at the current file (hello.py)
  vim.cmd("AgentlsDiff")
  local diff = require("agentls.diff")
  wait_for("diff open", 10000, function()
    return diff.state ~= nil and diff.state.scratch ~= nil and vim.api.nvim_get_current_buf() == diff.state.scratch
  end)
  local function no_name_buffers()
    return #vim.tbl_filter(function(info)
      return info.name == ""
    end, vim.fn.getbufinfo({ buflisted = 1 }))
  end
  local first = {
    tab_label = vim.fn.pathshorten(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ":~:.")),
    no_name = no_name_buffers(),
    name = vim.api.nvim_buf_get_name(0),
    lines = buffer_lines(),
    diff_windows = #vim.tbl_filter(function(win)
      return vim.wo[win].diff
    end, vim.api.nvim_tabpage_list_wins(0)),
  }
  vim.api.nvim_feedkeys("gr", "x", false) -- reject hello.py
  wait_for("next file shown", 10000, function()
    return diff.state ~= nil and vim.api.nvim_buf_get_name(0):find("version.py", 1, true) ~= nil
  end)
  local second = { name = vim.api.nvim_buf_get_name(0), lines = buffer_lines() }
  vim.api.nvim_feedkeys("ga", "x", false) -- accept version.py
  wait_for("review closed", 10000, function()
    return diff.state == nil
  end)
  wait_for("version.py saved", 10000, function()
    return vim.deep_equal(vim.fn.readfile(workspace .. "/version.py"), { "VERSION = 2" })
  end)
  settle(300)
  return {
    session = session,
    view_after = view.lines(session), -- after gr / ga: no longer "staged for review"
    no_name_after = no_name_buffers(),
    view_open = view_open,
    view = view_lines,
    expanded = expanded,
    first = first,
    second = second,
    hello_disk = vim.fn.readfile(workspace .. "/hello.py"),
    modified = modified_buffers(),
    tabs = #vim.api.nvim_list_tabpages(),
    health = health_lines(),
    notifications = notifications,
  }
end

-- No silent outcomes: an edit Neovim skips while answering applied: true (a stale
-- version), and a same-line conflict with the user's typing.
NEW_CASES.stale = function()
  local agentls = start({ mode = "review" })
  local session = run("Rename greet to welcome")
  local bufnr = vim.api.nvim_get_current_buf()
  -- the buffer has a version the server knows (>0: Neovim checks only those)…
  vim.api.nvim_buf_set_lines(bufnr, 2, 2, false, { "# a note" })
  settle(400)
  -- …and the user types between the server building the edit and Neovim applying it
  local util = vim.lsp.util
  local apply = util.apply_workspace_edit
  util.apply_workspace_edit = function(...)
    util.apply_workspace_edit = apply
    vim.api.nvim_buf_set_lines(bufnr, 3, 3, false, { "# typed meanwhile" })
    return apply(...)
  end
  local skipped = nil
  agentls.accept(session, nil, function(r)
    skipped = r
  end)
  wait_for("stale accept answered", 15000, function()
    return skipped ~= nil
  end)
  local ok_report = pcall(wait_for, "stale accept reported", 5000, function()
    return notified("nothing was applied") ~= nil
  end)
  if not ok_report then
    error("stale accept not reported; result " .. vim.inspect(skipped), 0)
  end
  local stale_message = notified("nothing was applied")
  -- now a same-line conflict: the user changes line 1, which the agent's edit also changes
  vim.api.nvim_buf_set_lines(bufnr, 0, 1, false, { "def greet(person):" })
  settle(200)
  local before = #notifications
  local conflict = nil
  agentls.accept(session, nil, function(r)
    conflict = r
  end)
  wait_for("conflict answered", 15000, function()
    return conflict ~= nil and #notifications > before
  end)
  return {
    session = session,
    skipped = skipped,
    stale_message = stale_message,
    conflict = conflict,
    conflict_message = notifications[#notifications],
    buffer = buffer_lines(),
    notifications = notifications,
  }
end

-- 0.11+: lsp/agentls.lua + vim.lsp.enable('agentls'), no setup(); progress through
-- LspProgress / vim.lsp.status(); no settings given.
NEW_CASES.enable = function()
  local progress = {}
  vim.api.nvim_create_autocmd("LspProgress", {
    callback = function(ev)
      local params = ev.data and ev.data.params or {}
      local value = params.value or {}
      table.insert(progress, {
        token = tostring(params.token),
        kind = value.kind,
        title = value.title,
        message = value.message,
        status = vim.lsp.status(),
      })
    end,
  })
  vim.cmd("runtime plugin/agentls.lua") -- what a plugin manager sources (-u NONE does not)
  vim.lsp.config("agentls", { cmd = cmd, root_markers = { "hello.py" } })
  vim.lsp.enable("agentls")
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/hello.py"))
  wait_client()
  local session = run("Rename greet to welcome")
  vim.cmd("AgentlsAccept")
  wait_for("buffer shows the edit", 10000, function()
    return vim.deep_equal(buffer_lines(), RENAMED)
  end)
  settle(300)
  return {
    session = session,
    health = health_lines(), -- the vim.lsp.config + vim.lsp.enable path: its cmd, not PATH
    progress = progress,
    disk = vim.fn.readfile(workspace .. "/hello.py"),
    modified = modified_buffers(),
    server_messages = server_messages,
    notifications = notifications,
  }
end

-- setup({}) with nothing but the project's .venv/bin/agentls (agentls is not on PATH):
-- the server starts from there, and :checkhealth says so.
NEW_CASES.venv = function()
  if vim.fn.executable("agentls") == 1 then
    error("agentls is on PATH; this case needs it not to be", 0)
  end
  vim.cmd("cd " .. vim.fn.fnameescape(workspace))
  local agentls = require("agentls")
  agentls.setup({})
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/hello.py"))
  wait_client()
  local running = agentls.client()
  return {
    cmd = running and running.config.cmd or vim.NIL,
    health = health_lines(),
  }
end

-- Cases in a file of their own (test/e2e_<case>.lua) return a function of these helpers.
local own_file = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/e2e_" .. tostring(case) .. ".lua"
if not NEW_CASES[case] and vim.fn.filereadable(own_file) == 1 then
  NEW_CASES[case] = function()
    return dofile(own_file)({
      workspace = workspace, step = step, wait_for = wait_for, settle = settle, start = start,
      notified = notified, buffer_lines = buffer_lines, modified_buffers = modified_buffers,
      notifications = notifications, server_messages = server_messages, RENAMED = RENAMED,
    })
  end
end

local function run_case()
  if case == "unit" then
    return unit_case()
  end
  if NEW_CASES[case] then
    return NEW_CASES[case]()
  end
  step("start")
  local agentls = require("agentls")
  if case == "ask" then
    -- no `settings` at all: must not make the server warn (an empty table is a JSON list)
    agentls.setup({ cmd = cmd, root_dir = workspace })
  else
    agentls.setup({ cmd = cmd, settings = { mode = "review" }, root_dir = workspace })
  end
  local file = workspace .. "/hello.py"
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  wait_client()
  local log = agentls.log
  if not same(buffer_lines(), ORIGINAL) then
    error("fixture not as expected: " .. vim.inspect(buffer_lines()), 0)
  end

  if case == "edit" then
    vim.cmd("1,2AgentlsRun Rename greet to welcome") -- a linewise range: lines 1-2 as context
    wait_for("session started", 45000, function()
      return log.last_session ~= nil
    end)
    local session = log.last_session
    wait_for("run finished", 60000, function()
      return log.sessions[session] and log.sessions[session].running == false
    end)
    if log.sessions[session].status ~= "completed" then
      error("run ended " .. tostring(log.sessions[session].status) .. ": " .. tostring(log.sessions[session].error), 0)
    end
    -- Review mode on a client without change annotations: nothing is applied yet.
    if not same(buffer_lines(), ORIGINAL) then
      error("buffer changed before accept: " .. vim.inspect(buffer_lines()), 0)
    end
    local accepted = nil
    agentls.accept(session, nil, function(r)
      accepted = r
    end)
    -- 0.7.2 answers applied:true even for a skipped stale edit: trust the buffer text.
    wait_for("buffer shows the edit", 10000, function()
      return same(buffer_lines(), RENAMED)
    end)
    wait_for("accept answered", 5000, function()
      return accepted ~= nil
    end)
    vim.cmd("write")
    if not same(disk_lines(file), RENAMED) then
      error("file on disk after :write is " .. vim.inspect(disk_lines(file)), 0)
    end
    step("written")
    local status = nil
    vim.cmd("AgentlsStatus")
    wait_for("status answered", 5000, function()
      status = require("agentls.commands").last_status
      return status ~= nil
    end)
    return {
      session = session,
      accepted = accepted,
      buffer = buffer_lines(),
      reply = log.sessions[session].text,
      status_sessions = #(status.sessions or {}),
    }
  elseif case == "ask" then
    vim.cmd("AgentlsAsk What does greet do?")
    wait_for("session started", 45000, function()
      return log.last_session ~= nil
    end)
    local session = log.last_session
    wait_for("run finished", 60000, function()
      return log.sessions[session] and log.sessions[session].running == false
    end)
    wait_for("answer shown", 10000, function()
      return vim.fn.execute("messages"):find("followed by name", 1, true) ~= nil
    end)
    if not same(buffer_lines(), ORIGINAL) then
      error("an ask run changed the buffer", 0)
    end
    return { session = session, status = log.sessions[session].status, server_messages = server_messages }
  elseif case == "cancel" then
    vim.cmd("AgentlsRun Rename greet to welcome")
    wait_for("session started", 45000, function()
      return log.last_session ~= nil
    end)
    local session = log.last_session
    -- Mid-way: the first tool call has finished and the model is (hanging) on turn 2.
    wait_for("first tool finished", 20000, function()
      for _, e in ipairs(log.events) do
        if e.type == "tool_finished" and e.session_id == session then
          return true
        end
      end
      return false
    end)
    vim.cmd("AgentlsCancel")
    wait_for("run cancelled", 15000, function()
      return log.sessions[session] and log.sessions[session].running == false
    end)
    if log.sessions[session].status ~= "cancelled" then
      error("run ended " .. tostring(log.sessions[session].status) .. ", expected cancelled", 0)
    end
    vim.wait(500) -- give a (wrong) late applyEdit the chance to arrive
    if not same(buffer_lines(), ORIGINAL) then
      error("buffer changed by a cancelled run: " .. vim.inspect(buffer_lines()), 0)
    end
    if vim.bo.modified then
      error("buffer marked modified by a cancelled run", 0)
    end
    if not same(disk_lines(file), ORIGINAL) then
      error("file on disk changed by a cancelled run", 0)
    end
    local rejected = nil
    agentls.reject(session, nil, function(r)
      rejected = r
    end)
    wait_for("reject answered", 5000, function()
      return rejected ~= nil
    end)
    return { session = session, status = log.sessions[session].status, rejected = rejected }
  end
  error("unknown AGENTLS_E2E_CASE " .. tostring(case), 0)
end

local ok, value = xpcall(run_case, debug.traceback)
if ok then
  finish(true, nil, value)
else
  finish(false, tostring(value))
end
