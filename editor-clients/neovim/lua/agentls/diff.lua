-- :AgentlsDiff — review a session's staged files one at a time: a new tab with the file's
-- buffer (left, what you have) and the agent's version (right, a scratch buffer), in diff
-- mode. In the agent's side: ga accepts this file, gr rejects it, ha / hr accept / reject
-- the hunk under the cursor (hr asks why: the model is told when the session continues),
-- ]f / [f go to the next / previous staged file, q closes the review. The file's check
-- before review ("tests 4/4 ✓ · 0 new errors") is in the agent side's winbar (Neovim 0.8+)
-- and in the message shown with each file.
local compat = require("agentls.compat")

local M = {}

M.state = nil -- {session, files, hunks, index, tab, scratch}

local function rel(uri)
  return vim.fn.fnamemodify(vim.uri_to_fname(uri), ":~:.")
end

local function fetch(session, on_files)
  return require("agentls.commands").execute("agentls.staged", { session = session }, function(result)
    result = compat.denil(result) or {}
    vim.schedule(function()
      on_files(result.files or {}, result.hunks or {})
    end)
  end)
end

local function close_tab()
  local state = M.state
  if state and state.tab and vim.api.nvim_tabpage_is_valid(state.tab) then
    if #vim.api.nvim_list_tabpages() > 1 then
      vim.api.nvim_set_current_tabpage(state.tab)
      vim.cmd("tabclose")
    end
  end
  if state and state.scratch and vim.api.nvim_buf_is_valid(state.scratch) then
    vim.api.nvim_buf_delete(state.scratch, { force = true })
  end
end

function M.close()
  close_tab()
  M.state = nil
end

local function lines_of(text)
  if text == nil then
    return {}
  end
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

local function show(index)
  local state = M.state
  local file = state.files[index]
  state.index = index
  close_tab()
  local path = vim.uri_to_fname(file.uri)
  if file.kind == "create" or file.current == nil then
    -- nothing on disk yet: compare with an empty scratch buffer, never create the file
    vim.cmd("tabnew")
    vim.bo.buftype = "nofile"
    vim.bo.bufhidden = "wipe"
    vim.bo.swapfile = false
    vim.api.nvim_buf_set_name(0, ("%s (not on disk yet)"):format(rel(file.uri)))
  else
    -- the file itself in a new tab: no empty [No Name] buffer is left behind
    local source = file.old_uri and vim.uri_to_fname(file.old_uri) or path
    vim.cmd("tabedit " .. vim.fn.fnameescape(source))
  end
  state.tab = vim.api.nvim_get_current_tabpage()
  local filetype = vim.bo.filetype
  vim.cmd("diffthis")
  vim.cmd("rightbelow vertical new")
  local scratch = vim.api.nvim_get_current_buf()
  state.scratch = scratch
  vim.bo[scratch].buftype = "nofile"
  vim.bo[scratch].bufhidden = "wipe"
  vim.bo[scratch].swapfile = false
  -- named after the file, so the tab reads "hello.py (agentls …)", not "a//s/1/hello.py"
  vim.api.nvim_buf_set_name(scratch, ("%s (agentls %s)"):format(rel(file.uri), state.session))
  vim.api.nvim_buf_set_lines(scratch, 0, -1, false, lines_of(file.staged))
  vim.bo[scratch].modifiable = false
  if filetype ~= "" then
    vim.bo[scratch].filetype = filetype
  end
  vim.cmd("diffthis")
  M.keymaps(scratch)
  local what = file.kind == "delete" and "deleted by the agent"
    or file.kind == "create" and "created by the agent"
    or file.kind == "rename" and ("renamed from " .. rel(file.old_uri))
    or "changed by the agent"
  -- the file's check before review (new errors, lint, tests), as the run ended
  local check = file.check ~= nil and file.check ~= vim.NIL and ("checks: " .. file.check) or nil
  if check and vim.fn.exists("+winbar") == 1 then
    vim.wo.winbar = check:gsub("%%", "%%%%")
  end
  compat.notify(
    ("agentls diff %d/%d: %s (%s)%s — ga/gr accept/reject file · ha/hr hunk · ]f next · [f previous · q close"):format(
      index,
      #state.files,
      rel(file.uri),
      what,
      check and (" · " .. check) or ""
    )
  )
end

local function after_decision()
  local state = M.state
  fetch(state.session, function(files, hunks)
    if #files == 0 then
      M.close()
      compat.notify(("agentls: session %s has nothing staged any more"):format(state.session))
      return
    end
    state.files = files
    state.hunks = hunks
    show(math.min(state.index, #files))
  end)
end

local function decide(command)
  local state = M.state
  if not state then
    return
  end
  local file = state.files[state.index]
  require("agentls.commands")[command](state.session, { file.uri }, function()
    vim.schedule(after_decision)
  end)
end

--- The hunk of the shown file at `line` of the agent's side (1-based), else the nearest one.
function M.hunk_at(line)
  local state = M.state
  if not state then
    return nil
  end
  local path = vim.uri_to_fname(state.files[state.index].uri)
  local best, distance = nil, math.huge
  for _, hunk in ipairs(state.hunks or {}) do
    if vim.fn.resolve(hunk.path) == vim.fn.resolve(path) then
      local first = hunk.new_start
      local last = hunk.new_start + math.max(hunk.new_lines, 1) - 1
      local d = line < first and first - line or line > last and line - last or 0
      if d < distance then
        best, distance = hunk, d
      end
    end
  end
  return best
end

--- Accept or reject (`command`) the hunk under the cursor; `reason` goes to the model.
function M.hunk(command, reason)
  local state = M.state
  local hunk = state and M.hunk_at(vim.api.nvim_win_get_cursor(0)[1])
  if not hunk then
    compat.notify("agentls: no hunk of this file is staged", vim.log.levels.WARN)
    return false
  end
  local args = { session = state.session, hunks = { hunk.id } }
  if reason and reason ~= "" then
    args.reason = reason
  end
  return require("agentls.commands").execute("agentls." .. command, args, function()
    vim.schedule(after_decision)
  end)
end

function M.keymaps(bufnr)
  local function map(lhs, rhs, desc)
    vim.keymap.set("n", lhs, rhs, { buffer = bufnr, nowait = true, silent = true, desc = desc })
  end
  map("ga", function()
    decide("accept")
  end, "agentls: accept this file")
  map("gr", function()
    decide("reject")
  end, "agentls: reject this file")
  map("ha", function()
    M.hunk("accept")
  end, "agentls: accept the hunk under the cursor")
  map("hr", function()
    vim.ui.input({ prompt = "Reject this hunk — why (the agent is told)? " }, function(reason)
      if reason ~= nil then -- nil: cancelled with <Esc>
        M.hunk("reject", reason)
      end
    end)
  end, "agentls: reject the hunk under the cursor")
  map("]f", function()
    show(M.state.index % #M.state.files + 1)
  end, "agentls: next staged file")
  map("[f", function()
    show((M.state.index - 2) % #M.state.files + 1)
  end, "agentls: previous staged file")
  map("q", M.close, "agentls: close the review")
end

--- Open the review of `session` (default: the last one) at the current buffer's file when
--- it is staged, else at the first staged file.
function M.open(session)
  session = session or require("agentls.log").last_session
  if not session then
    compat.notify("agentls: no session yet — start one with :AgentlsRun", vim.log.levels.WARN)
    return false
  end
  local here = vim.api.nvim_buf_get_name(0) ~= "" and vim.uri_from_bufnr(0) or nil
  return fetch(session, function(files, hunks)
    if #files == 0 then
      compat.notify(("agentls: nothing staged in session %s"):format(session))
      return
    end
    M.close()
    M.state = { session = session, files = files, hunks = hunks, index = 1 }
    for i, file in ipairs(files) do
      if file.uri == here or file.old_uri == here then
        M.state.index = i
      end
    end
    show(M.state.index)
  end)
end

return M
