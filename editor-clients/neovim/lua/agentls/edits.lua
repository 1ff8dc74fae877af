-- Applying the server's workspace edits: Neovim's own machinery, then two things it lacks.
--
-- 1. The didChange of every changed buffer goes out before the answer, so the server can
--    confirm the edit from the buffers' versions and text at once (the client declares
--    `experimental.agentls.syncBeforeApplyReply`).
-- 2. Files the edit changed are written back when they had no unsaved changes of the user
--    (like VS Code's files.refactoring.autoSave), so no hidden modified buffer is left
--    behind (`:qa` would fail with E37); undo still works. Buffers with the user's own
--    unsaved changes are not written: they are listed, to be saved with `:w` / `:wa`.
--    `setup({ save_edits = false })` leaves every changed buffer unsaved instead.
local compat = require("agentls.compat")

local M = {}

--- Files written back or left modified by the last applied edit (tests and messages read it).
M.last = { written = {}, unsaved = {} }

local function touched_uris(edit)
  local uris = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument then
      uris[change.textDocument.uri] = true
    elseif change.kind == "create" then
      uris[change.uri] = true
    elseif change.kind == "rename" then
      uris[change.newUri] = true
    end
  end
  for uri, _ in pairs(edit.changes or {}) do
    uris[uri] = true
  end
  return vim.tbl_keys(uris)
end

M.options = { save = true }

local function shown_in_window(bufnr)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      return true
    end
  end
  return false
end

--- Buffer state before an edit: bufnr → {loaded, modified}.
function M.snapshot()
  local state = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    state[bufnr] = {
      loaded = vim.api.nvim_buf_is_loaded(bufnr),
      modified = vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].modified,
    }
  end
  return state
end

local function write(bufnr)
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd("silent keepalt write")
  end)
  return ok, err
end

--- After an applied edit: write back the files that had no unsaved changes of the user.
function M.settle(edit, before)
  local written, unsaved, failed = {}, {}, {}
  for _, uri in ipairs(touched_uris(edit)) do
    local bufnr = vim.uri_to_bufnr(uri)
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].modified then
      local prior = before[bufnr] or {}
      local name = vim.fn.fnamemodify(vim.uri_to_fname(uri), ":~:.")
      if prior.modified or not M.options.save then
        table.insert(unsaved, name) -- the user's unsaved work is theirs to save
      else
        local ok, err = write(bufnr)
        table.insert(ok and written or failed, ok and name or (name .. " (" .. tostring(err) .. ")"))
      end
    end
  end
  M.last = { written = written, unsaved = unsaved }
  if #written > 0 then
    compat.notify("agentls: saved " .. table.concat(written, ", ") .. " (u to undo)")
  end
  if #failed > 0 then
    compat.notify("agentls: could not save " .. table.concat(failed, ", "), vim.log.levels.WARN)
  end
  local hidden = vim.tbl_filter(function(name)
    return not shown_in_window(vim.fn.bufnr(name))
  end, unsaved)
  if #hidden > 0 then
    compat.notify(
      "agentls: changed in buffers with unsaved changes of yours: "
        .. table.concat(hidden, ", ")
        .. " (:wa to save)",
      vim.log.levels.WARN
    )
  end
end

--- Neovim 0.7-0.9 cannot create a file or rename one into a folder that does not exist
--- yet (io.open fails): make the parent folders first.
local function make_parent_folders(edit)
  for _, change in ipairs(edit.documentChanges or {}) do
    local target = (change.kind == "create" and change.uri) or (change.kind == "rename" and change.newUri)
    if target then
      local dir = vim.fn.fnamemodify(vim.uri_to_fname(target), ":h")
      if vim.fn.isdirectory(dir) == 0 then
        vim.fn.mkdir(dir, "p")
      end
    end
  end
end

--- A created file's content arrives as an insert into an empty buffer, which already has
--- one empty line: with 'fixeol' that line would become an extra blank line at the end.
local function trim_created(edit)
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.kind == "create" then
      local bufnr = vim.uri_to_bufnr(change.uri)
      if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].fixeol then
        local count = vim.api.nvim_buf_line_count(bufnr)
        if count > 1 and vim.api.nvim_buf_get_lines(bufnr, count - 1, count, false)[1] == "" then
          vim.api.nvim_buf_set_lines(bufnr, count - 1, count, false, {})
        end
      end
    end
  end
end

--- Handler for the server's workspace/applyEdit request.
function M.apply_edit_handler(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client or type(params) ~= "table" or type(params.edit) ~= "table" then
    return { applied = false, failureReason = "agentls: malformed workspace/applyEdit" }
  end
  local before = M.snapshot()
  make_parent_folders(params.edit)
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, params.edit, client.offset_encoding or "utf-16")
  if ok then
    pcall(trim_created, params.edit)
    local settled, problem = pcall(M.settle, params.edit, before)
    if not settled then
      compat.notify("agentls: " .. tostring(problem), vim.log.levels.WARN)
    end
  end
  compat.flush_changes(client) -- the server sees the new text before the answer
  if not ok then
    return { applied = false, failureReason = tostring(err) }
  end
  return { applied = true }
end

return M
