-- The server's commands (docs/lsp.md, "Commands") as Lua functions and :Agentls* user commands.
local client = require("agentls.client")
local compat = require("agentls.compat")
local log = require("agentls.log")

local M = {}

local ERROR = vim.log.levels.ERROR

--- workspace/executeCommand with one argument object; `on_result(result)` on success.
function M.execute(command, args, on_result, bufnr)
  local c = client.get(bufnr)
  if not c then
    compat.notify("agentls: no agentls server is running for this buffer (see :checkhealth lsp / :LspInfo)", ERROR)
    return false
  end
  if args == nil or (type(args) == "table" and next(args) == nil) then
    args = vim.empty_dict() -- an empty Lua table would be sent as [] (the server wants an object)
  end
  local params = { command = command, arguments = { args } }
  compat.request(c, "workspace/executeCommand", params, function(err, result)
    if err then
      compat.notify(("agentls: %s failed: %s"):format(command, err.message or vim.inspect(err)), ERROR)
      return
    end
    if on_result then
      on_result(compat.denil(result))
    end
  end, bufnr)
  return true
end

-- Selections ---------------------------------------------------------------------------

local function line_text(bufnr, lnum)
  return vim.api.nvim_buf_get_lines(bufnr, lnum - 1, lnum, true)[1] or ""
end

local function char_end(text, byte) -- byte: 1-based start of the last selected character
  local char = text:sub(byte):match("^[%z\1-\127\194-\244][\128-\191]*") or ""
  return byte - 1 + math.max(#char, 1)
end

--- The LSP range (UTF-16) of a command's range: charwise for a `v` selection, else lines.
function M.range_of(opts, bufnr)
  if not opts or (opts.range or 0) == 0 then
    return nil
  end
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local line1, line2 = opts.line1, opts.line2
  local vstart, vend = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if vim.fn.visualmode() == "v" and vstart[2] == line1 and vend[2] == line2 then
    local first, last = line_text(bufnr, line1), line_text(bufnr, line2)
    return {
      start = { line = line1 - 1, character = compat.utf16_col(first, vstart[3] - 1) },
      ["end"] = { line = line2 - 1, character = compat.utf16_col(last, char_end(last, math.min(vend[3], #last))) },
    }
  end
  local last = line_text(bufnr, line2)
  return {
    start = { line = line1 - 1, character = 0 },
    ["end"] = { line = line2 - 1, character = compat.utf16_col(last, #last) },
  }
end

local function context(opts, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local args = {}
  if vim.api.nvim_buf_get_name(bufnr) ~= "" then
    args.uri = vim.uri_from_bufnr(bufnr)
    args.range = M.range_of(opts, bufnr)
  end
  return args
end

-- Runs -----------------------------------------------------------------------------------

local function started(kind)
  return function(result)
    if type(result) == "table" and result.session then
      log.last_session = result.session
      log.sessions[result.session] = log.sessions[result.session]
        or { status = "starting", running = true, text = "" }
      compat.notify(("agentls: %s started (session %s) — :AgentlsView to watch, :AgentlsCancel to stop"):format(kind, result.session))
    end
  end
end

--- Start a run. `extra`: {range=, mode=, session=}; returns false when no server.
function M.run(prompt, extra, bufnr)
  extra = extra or {}
  local args = context({ range = 0 }, bufnr)
  args.prompt = prompt
  args.range = extra.range or args.range
  args.mode = extra.mode
  args.session = extra.session
  return M.execute("agentls.run", args, extra.on_result or started("run"), bufnr)
end

function M.ask(prompt, extra, bufnr)
  extra = extra or {}
  local args = context({ range = 0 }, bufnr)
  args.prompt = prompt
  args.range = extra.range or args.range
  args.session = extra.session
  return M.execute("agentls.ask", args, extra.on_result or started("question"), bufnr)
end

--- Diagnostics on the cursor line (or the given lines) as a fix-it prompt.
function M.fix_prompt(bufnr, line1, line2)
  local found = {}
  for lnum = line1, line2 do
    for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = lnum - 1 })) do
      table.insert(found, ("- line %d: %s%s"):format(lnum, d.message, d.source and (" [" .. d.source .. "]") or ""))
    end
  end
  if #found == 0 then
    return nil
  end
  return "Fix these diagnostics:\n" .. table.concat(found, "\n")
end

function M.fix(opts, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local line1, line2 = opts.line1, opts.line2
  if (opts.range or 0) == 0 then
    line1 = vim.api.nvim_win_get_cursor(0)[1]
    line2 = line1
  end
  local prompt = M.fix_prompt(bufnr, line1, line2)
  if not prompt then
    compat.notify("agentls: no diagnostics here", vim.log.levels.WARN)
    return false
  end
  return M.run(prompt, { range = M.range_of({ range = 2, line1 = line1, line2 = line2 }, bufnr) }, bufnr)
end

function M.cancel(session)
  return M.execute("agentls.cancel", { session = session }, function(result)
    local ids = type(result) == "table" and result.cancelled or {}
    compat.notify(#ids > 0 and ("agentls: cancelling " .. table.concat(ids, ", ")) or "agentls: nothing to cancel")
  end)
end

local function edit_command(command)
  return function(session, uris, on_result)
    session = session or log.last_session
    if not session then
      compat.notify("agentls: no session yet — start one with :AgentlsRun", ERROR)
      return false
    end
    -- what was applied, left out or discarded is told by the server's edit_result event
    -- (outcomes.lua), also when a code action asked
    return M.execute(command, { session = session, uris = uris }, on_result)
  end
end

M.accept = edit_command("agentls.accept")
M.reject = edit_command("agentls.reject")

M.last_status = nil

function M.status(on_result)
  return M.execute("agentls.status", vim.empty_dict(), function(result)
    M.last_status = result
    local lines = require("agentls.status").lines(result)
    vim.schedule(function()
      vim.api.nvim_echo({ { table.concat(lines, "\n") } }, true, {})
    end)
    if on_result then
      on_result(result)
    end
  end)
end

--- The live log, or (with bang) the last session's transcript file.
function M.transcript(bang)
  if bang then
    local s = log.last_session and log.sessions[log.last_session]
    if not (s and s.transcript) then
      compat.notify("agentls: no transcript yet (a run writes one when it finishes)", vim.log.levels.WARN)
      return
    end
    local path = s.transcript:match("^file://") and vim.uri_to_fname(s.transcript) or s.transcript
    vim.cmd("botright split " .. vim.fn.fnameescape(path))
    return
  end
  log.open()
end

-- User commands ---------------------------------------------------------------------------

local function prompt_from(opts, label)
  local prompt = opts.args
  if prompt == nil or prompt == "" then
    prompt = vim.fn.input(label)
  end
  return prompt ~= "" and prompt or nil
end

function M.create_user_commands()
  local create = vim.api.nvim_create_user_command
  create("AgentlsRun", function(opts)
    local prompt = prompt_from(opts, "agentls task: ")
    if prompt then
      M.run(prompt, { range = M.range_of(opts), mode = opts.bang and "auto" or nil })
    end
  end, {
    nargs = "*",
    range = true,
    bang = true,
    complete = function(...) -- `/name` of a custom command (prompt_commands.lua)
      return require("agentls.prompt_commands").complete(...)
    end,
    desc = "agentls: run a task (! = auto-apply edits)",
  })
  create("AgentlsAsk", function(opts)
    local prompt = prompt_from(opts, "agentls question: ")
    if prompt then
      M.ask(prompt, { range = M.range_of(opts) })
    end
  end, { nargs = "*", range = true, desc = "agentls: ask a question (read-only)" })
  create("AgentlsFix", function(opts)
    M.fix(opts)
  end, { range = true, desc = "agentls: fix the diagnostics under the cursor" })
  create("AgentlsCancel", function(opts)
    M.cancel(opts.args ~= "" and opts.args or nil)
  end, { nargs = "?", desc = "agentls: cancel a run (default: all)" })
  create("AgentlsAccept", function(opts)
    M.accept(opts.args ~= "" and opts.args or nil, opts.bang and { vim.uri_from_bufnr(0) } or nil)
  end, { nargs = "?", bang = true, desc = "agentls: apply staged edits (! = this file only)" })
  create("AgentlsReject", function(opts)
    M.reject(opts.args ~= "" and opts.args or nil, opts.bang and { vim.uri_from_bufnr(0) } or nil)
  end, { nargs = "?", bang = true, desc = "agentls: discard staged edits (! = this file only)" })
  create("AgentlsTranscript", function(opts)
    M.transcript(opts.bang)
  end, { bang = true, desc = "agentls: live log (! = transcript file)" })
  create("AgentlsStatus", function()
    M.status()
  end, { desc = "agentls: sessions, model, index" })
  create("AgentlsDiff", function(opts)
    require("agentls.diff").open(opts.args ~= "" and opts.args or nil)
  end, { nargs = "?", desc = "agentls: review staged files in a diff (ga accept, gr reject)" })
  create("AgentlsRewind", function(opts)
    require("agentls.rewind").command(opts)
  end, { nargs = "?", desc = "agentls: back to the end of a turn (no argument: pick one)" })
  create("AgentlsView", function(opts)
    require("agentls.view").open(opts.args ~= "" and opts.args or nil, true)
  end, { nargs = "?", desc = "agentls: the session side buffer (answer, tools, todos)" })
end

return M
