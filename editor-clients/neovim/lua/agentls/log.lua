-- The live log: a scratch buffer fed by `agentls/event` notifications, plus run state.
--
-- Streamed text is appended to the current line; each tool call gets its own line with
-- its human summary and outcome; a run's end shows its status and transcript path.
local compat = require("agentls.compat")

local M = {}

M.BUFNAME = "agentls://log"

--- session id → {status, running, transcript, text}
M.sessions = {}
--- the most recent session this editor started or heard of
M.last_session = nil
--- every event received, newest last (bounded); tests and statuslines read it
M.events = {}
local MAX_EVENTS = 500

local bufnr = nil

local function log_buffer()
  if bufnr and vim.api.nvim_buf_is_valid(bufnr) then
    return bufnr
  end
  bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(bufnr, M.BUFNAME)
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].filetype = "markdown"
  return bufnr
end

local function scroll_windows(buf)
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
end

--- Append `text` to the log; a leading "\n"-free chunk continues the last line.
function M.append(text, new_line)
  local buf = log_buffer()
  local chunks = vim.split(text, "\n", { plain = true })
  local count = vim.api.nvim_buf_line_count(buf)
  local last = vim.api.nvim_buf_get_lines(buf, count - 1, count, false)[1] or ""
  local empty = count == 1 and last == ""
  if new_line and not empty then
    vim.api.nvim_buf_set_lines(buf, count, count, false, chunks)
  else
    chunks[1] = last .. chunks[1]
    vim.api.nvim_buf_set_lines(buf, count - 1, count, false, chunks)
  end
  vim.bo[buf].modified = false -- a log, not a file: never "unsaved"
  scroll_windows(buf)
end

local text_open = false -- streamed text continues the current line until a tool/status line

function M.line(text)
  M.append(text, true)
  text_open = false
end

local function stream(text)
  M.append(text, not text_open)
  text_open = true
end

local function last_line(text)
  local lines = vim.split(vim.trim(text or ""), "\n", { plain = true })
  return lines[#lines] or ""
end

--- Open the log in a split (or focus its window).
function M.open()
  local buf = log_buffer()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_set_current_win(win)
      return buf
    end
  end
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
  scroll_windows(buf)
  return buf
end

function M.lines()
  return vim.api.nvim_buf_get_lines(log_buffer(), 0, -1, false)
end

local function session(id)
  if not M.sessions[id] then
    M.sessions[id] = { status = "starting", running = true, text = "" }
  end
  return M.sessions[id]
end

local renderers = {
  run_started = function(e)
    M.line(("## %s — %s"):format(e.session_id, last_line(e.prompt)))
  end,
  text_delta = function(e)
    stream(e.text or "")
  end,
  tool_started = function(e)
    M.line("→ " .. (e.summary or e.name or "tool"))
  end,
  tool_finished = function(e)
    M.line(("%s %s (%d ms)"):format(e.is_error and "✗" or "✓", e.name, e.duration_ms or 0))
  end,
  retrying = function(e)
    M.line(("model request failed (%s); retry %d"):format(e.error or "?", e.attempt or 0))
  end,
  notice = function(e)
    M.line("! " .. (e.message or ""))
  end,
  run_finished = function(e)
    M.line(("== %s after %d turn(s)%s"):format(tostring(e.status), e.turns or 0, e.error and (": " .. tostring(e.error)) or ""))
    if e.transcript then
      M.line("transcript: " .. tostring(e.transcript))
    end
  end,
  run_result = function(e)
    M.line("== " .. tostring(e.outcome or e.status))
  end,
  todos = function(e)
    local done = 0
    for _, todo in ipairs(e.todos or {}) do
      done = done + (todo.status == "completed" and 1 or 0)
    end
    M.line(("todo: %d/%d done"):format(done, #(e.todos or {})))
  end,
  mode_changed = function(e)
    M.line("! mode: " .. tostring(e.mode))
  end,
}

--- Where each event goes besides the log: the session view and the outcome messages.
local function forward(event)
  local ok, err = pcall(require("agentls.view").on_event, event)
  if not ok then
    compat.notify("agentls: session view: " .. tostring(err), vim.log.levels.DEBUG)
  end
  if event.type == "run_result" then
    require("agentls.outcomes").on_run_result(event)
  elseif event.type == "edit_result" then
    require("agentls.outcomes").on_edit_result(event)
  end
end

--- Handler for the `agentls/event` notification (signature of 0.5.1+ handlers).
function M.on_event(_, event)
  if type(event) ~= "table" then
    return
  end
  event = compat.denil(event) -- 0.12 decodes JSON null as vim.NIL
  table.insert(M.events, event)
  if #M.events > MAX_EVENTS then
    table.remove(M.events, 1)
  end
  local id = event.session_id
  if id then
    local s = session(id)
    M.last_session = id
    if event.type == "text_delta" then
      s.text = s.text .. (event.text or "")
    elseif event.type == "tool_started" then
      s.status = "running: " .. (event.summary or event.name or "tool")
    elseif event.type == "run_finished" then
      s.status = event.status
      s.transcript = event.transcript
      s.error = event.error
    elseif event.type == "run_result" then
      -- the run is over once its edits are delivered (run_finished comes before that)
      s.running = false
      s.status = event.status
      s.edit = event.edit
      s.error = event.error
    end
  end
  local render = renderers[event.type]
  if render then
    local ok, err = pcall(render, event)
    if not ok then
      vim.schedule(function()
        vim.notify("agentls: cannot render event: " .. tostring(err), vim.log.levels.DEBUG)
      end)
    end
  end
  forward(event)
  if event.type == "run_result" and vim.fn.exists("#User#AgentlsRunFinished") == 1 then
    vim.cmd("doautocmd <nomodeline> User AgentlsRunFinished")
  end
end

--- "agentls: 1 running" for a statusline, or "" when idle.
function M.statusline()
  local running = 0
  for _, s in pairs(M.sessions) do
    if s.running then
      running = running + 1
    end
  end
  return running > 0 and ("agentls: %d running"):format(running) or ""
end

return M
