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
  for name, passed in pairs(checks) do
    if not passed then
      error(("unit check %s failed: %s"):format(name, vim.inspect({ charwise, linewise, prompt })), 0)
    end
  end
  return { checks = checks }
end

local function run_case()
  if case == "unit" then
    return unit_case()
  end
  step("start")
  local agentls = require("agentls")
  agentls.setup({ cmd = cmd, settings = { mode = "review" }, root_dir = workspace })
  local file = workspace .. "/hello.py"
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  wait_for("client initialized", 30000, function()
    local c = agentls.client()
    return c ~= nil and c.initialized ~= false and not require("agentls.compat").is_stopped(c) and c.server_capabilities ~= nil
  end)
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
    return { session = session, status = log.sessions[session].status }
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
