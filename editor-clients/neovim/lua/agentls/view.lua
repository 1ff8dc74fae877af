-- The session side buffer: one scratch buffer per session, `agentls://session/<id>`,
-- re-drawn from the session's `agentls/event`s: the prompt, the todo list, the streamed
-- answer with one line per tool call (its status and duration), and the outcome with the
-- files still staged.
--
-- Keys in the buffer: <CR> on a tool line shows or hides its output, d = :AgentlsDiff,
-- a = :AgentlsAccept, r = :AgentlsReject, c = :AgentlsCancel, q = close.
local compat = require("agentls.compat")

local M = {}

M.WIDTH = 64
--- session id → model {prompt, status, items = {{kind="text"|"tool", ...}}, todos, result}
M.sessions = {}
M.options = { auto_open = true }

local buffers = {} -- session id → bufnr

local function model(id)
  local m = M.sessions[id]
  if not m then
    m = { id = id, status = "starting", items = {}, todos = nil, tools = {} }
    M.sessions[id] = m
  end
  return m
end

local function last_prompt_line(prompt)
  local lines = vim.split(vim.trim(prompt or ""), "\n", { plain = true })
  return lines[#lines] or ""
end

local TODO_MARK = { completed = "[x]", in_progress = "[~]", pending = "[ ]" }

local function todo_lines(todos)
  local lines = { "Todo" }
  for _, todo in ipairs(todos) do
    local text = todo.status == "in_progress" and (todo.active_form or todo.content) or todo.content
    table.insert(lines, ("  %s %s"):format(TODO_MARK[todo.status] or "[?]", tostring(text or "")))
  end
  table.insert(lines, "")
  return lines
end

local function tool_line(item)
  if item.finished then
    return ("%s %s (%d ms)"):format(item.is_error and "✗" or "✓", item.summary, math.floor((item.duration_ms or 0) + 0.5))
  end
  return "→ " .. item.summary .. " …"
end

local function usage_line(usage)
  if type(usage) ~= "table" then
    return nil
  end
  local tokens = (usage.input_tokens or 0) + (usage.output_tokens or 0)
  local cost = type(usage.cost_usd) == "number" and ("$%.4f"):format(usage.cost_usd) or "cost n/a"
  return ("%d in · %d out · %s tokens · %s"):format(usage.input_tokens or 0, usage.output_tokens or 0, tokens, cost)
end

--- The buffer's lines for a session, and the tool item of each line (for <CR>).
function M.render(m)
  local lines, tool_at = {}, {}
  table.insert(lines, ("agentls · session %s · %s"):format(m.id, m.status))
  if m.prompt then
    table.insert(lines, "> " .. last_prompt_line(m.prompt))
  end
  table.insert(lines, "")
  if m.todos and #m.todos > 0 then
    vim.list_extend(lines, todo_lines(m.todos))
  end
  for _, item in ipairs(m.items) do
    if item.kind == "text" then
      local chunks = vim.split(item.text, "\n", { plain = true })
      vim.list_extend(lines, chunks)
    elseif item.kind == "tool" then
      table.insert(lines, tool_line(item))
      tool_at[#lines] = item
      if item.open and item.output then
        for _, out in ipairs(vim.split(item.output, "\n", { plain = true })) do
          table.insert(lines, "    │ " .. out)
        end
      end
    elseif item.kind == "note" then
      table.insert(lines, "! " .. item.text)
    end
  end
  if m.result then
    table.insert(lines, "")
    local outcome = tostring(m.result.outcome or m.result.status)
    if m.handled and #m.handled > 0 and not (m.staged and #m.staged > 0) then
      -- "… staged for review" is over: say what became of the staged files instead
      outcome = tostring(m.result.status) .. " — " .. table.concat(m.handled, "; ")
    end
    table.insert(lines, "── " .. outcome)
    local usage = usage_line(m.result.usage)
    if usage then
      table.insert(lines, "   " .. usage)
    end
  end
  if m.staged and #m.staged > 0 then
    table.insert(lines, "   staged: " .. table.concat(m.staged, ", "))
    for _, check in ipairs(m.checks or {}) do
      -- each staged file's check before review: new errors, lint, the relevant tests
      local name = vim.fn.fnamemodify(check.path, ":~:.")
      if vim.tbl_contains(m.staged, name) then
        local failed = (check.new_errors or 0) > 0
          or (type(check.tests) == "table" and check.tests.status == "failed")
        local mark = failed and "✗" or (check.checked and "✓" or "·")
        table.insert(lines, ("   %s %s: %s"):format(mark, name, check.summary or ""))
      end
    end
    table.insert(lines, "   d diff · a accept · r reject")
  end
  return lines, tool_at
end

local function buffer(id)
  local bufnr = buffers[id]
  if bufnr and vim.api.nvim_buf_is_valid(bufnr) then
    return bufnr
  end
  bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(bufnr, "agentls://session/" .. id)
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].filetype = "markdown"
  vim.bo[bufnr].modifiable = false
  buffers[id] = bufnr
  M.keymaps(bufnr, id)
  return bufnr
end

local function windows_of(bufnr)
  local found = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      table.insert(found, win)
    end
  end
  return found
end

--- Redraw the session's buffer (and keep its windows scrolled to the end while running).
function M.redraw(id)
  local m = M.sessions[id]
  if not m then
    return
  end
  local bufnr = buffer(id)
  local lines, tool_at = M.render(m)
  m.tool_at = tool_at
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  if m.status == "running" or m.status == "starting" then
    for _, win in ipairs(windows_of(bufnr)) do
      pcall(vim.api.nvim_win_set_cursor, win, { #lines, 0 })
    end
  end
end

--- Show a session's buffer in a window on the right; focus stays where it is unless `focus`.
function M.open(id, focus)
  id = id or require("agentls.log").last_session
  if not id then
    compat.notify("agentls: no session yet — start one with :AgentlsRun", vim.log.levels.WARN)
    return nil
  end
  model(id)
  M.redraw(id)
  local bufnr = buffer(id)
  local win = windows_of(bufnr)[1]
  if not win then
    local current = vim.api.nvim_get_current_win()
    vim.cmd("botright vertical " .. M.WIDTH .. "split")
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, bufnr)
    vim.wo[win].wrap = true
    vim.wo[win].number = false
    vim.wo[win].relativenumber = false
    vim.wo[win].winfixwidth = true
    if not focus then
      vim.api.nvim_set_current_win(current)
    end
  elseif focus then
    vim.api.nvim_set_current_win(win)
  end
  return bufnr
end

function M.lines(id)
  local bufnr = buffers[id]
  if not bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
    return {}
  end
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

-- Events ---------------------------------------------------------------------------------

local function append_text(m, text)
  local last = m.items[#m.items]
  if last and last.kind == "text" then
    last.text = last.text .. text
  else
    table.insert(m.items, { kind = "text", text = text })
  end
end

local handlers = {
  run_started = function(m, e)
    m.prompt = e.prompt
    m.status = "running"
    m.result = nil
    if #m.items > 0 then
      table.insert(m.items, { kind = "text", text = "\n─── follow-up ───\n" })
    end
  end,
  text_delta = function(m, e)
    append_text(m, e.text or "")
  end,
  tool_started = function(m, e)
    local item = { kind = "tool", id = e.tool_use_id, name = e.name, summary = e.summary or e.name or "tool" }
    m.tools[e.tool_use_id or ""] = item
    table.insert(m.items, item)
  end,
  tool_finished = function(m, e)
    local item = m.tools[e.tool_use_id or ""]
    if item then
      item.finished = true
      item.is_error = e.is_error
      item.duration_ms = e.duration_ms
    end
  end,
  notice = function(m, e)
    table.insert(m.items, { kind = "note", text = e.message or "" })
  end,
  retrying = function(m, e)
    table.insert(m.items, { kind = "note", text = ("model request failed (%s); retrying"):format(e.error or "?") })
  end,
  todos = function(m, e)
    m.todos = e.todos or {}
  end,
  mode_changed = function(m, e)
    local text = e.mode == "plan" and "plan mode: the agent researches read-only, then shows a plan"
      or ("plan approved: the agent makes the changes (%s)"):format(e.mode == "auto" and "applied as made" or "for review")
    table.insert(m.items, { kind = "note", text = text })
  end,
  run_finished = function(m, e)
    m.status = e.status or "finished"
  end,
  run_result = function(m, e)
    m.status = e.status or m.status
    m.result = e
    m.checks = type(e.checks) == "table" and e.checks or nil
    m.staged = {}
    local edit = e.edit
    if type(edit) == "table" and edit.applied ~= true then
      for _, uri in ipairs(edit.files or {}) do
        table.insert(m.staged, vim.fn.fnamemodify(vim.uri_to_fname(uri), ":~:."))
      end
    end
  end,
  edit_result = function(m, e)
    if e.action == "reject" or e.applied == true then
      local still = {}
      for _, item in ipairs(e.left_out or {}) do
        table.insert(still, vim.fn.fnamemodify(vim.uri_to_fname(item.uri), ":~:."))
      end
      local done = {}
      for _, uri in ipairs(e.files or {}) do
        done[vim.fn.fnamemodify(vim.uri_to_fname(uri), ":~:.")] = true
      end
      m.staged = vim.tbl_filter(function(name)
        return not done[name] or vim.tbl_contains(still, name)
      end, m.staged or {})
      local names = {}
      for name in pairs(done) do
        if not vim.tbl_contains(still, name) then
          table.insert(names, name)
        end
      end
      if #names > 0 then
        table.sort(names)
        m.handled = m.handled or {}
        local verb = e.action == "reject" and "rejected " or "applied "
        table.insert(m.handled, verb .. table.concat(names, ", "))
      end
    end
  end,
}

--- One `agentls/event` (already cleaned of vim.NIL).
function M.on_event(event)
  local id = event.session_id
  local handle = handlers[event.type]
  if not id or not handle then
    return
  end
  local m = model(id)
  handle(m, event)
  if event.type == "run_started" and M.options.auto_open then
    M.open(id, false)
  end
  M.redraw(id)
end

-- Keys -------------------------------------------------------------------------------------

local function toggle_output(id)
  local m = M.sessions[id]
  local item = m and m.tool_at and m.tool_at[vim.api.nvim_win_get_cursor(0)[1]]
  if not item then
    return
  end
  if item.open then
    item.open = false
    M.redraw(id)
    return
  end
  item.open = true
  if item.output then
    M.redraw(id)
    return
  end
  require("agentls.commands").execute("agentls.toolResult", { session = id, tool_use_id = item.id }, function(result)
    result = compat.denil(result) or {}
    item.output = (result.is_error and "(error) " or "") .. tostring(result.content or "")
    vim.schedule(function()
      M.redraw(id)
    end)
  end)
end

function M.keymaps(bufnr, id)
  local function map(lhs, rhs, desc)
    vim.keymap.set("n", lhs, rhs, { buffer = bufnr, nowait = true, silent = true, desc = desc })
  end
  map("<CR>", function()
    toggle_output(id)
  end, "agentls: show/hide the tool call's output")
  map("d", function()
    require("agentls.diff").open(id)
  end, "agentls: review the staged files")
  map("a", function()
    require("agentls.commands").accept(id)
  end, "agentls: accept the staged edits")
  map("r", function()
    require("agentls.commands").reject(id)
  end, "agentls: reject the staged edits")
  map("c", function()
    require("agentls.commands").cancel(id)
  end, "agentls: cancel the run")
  map("q", "<cmd>close<cr>", "agentls: close")
end

return M
