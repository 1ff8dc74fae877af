-- Feature detection across Neovim 0.7 … current, in one place.
--
-- Every API newer than 0.7 is looked up here, never called directly elsewhere, so the
-- rest of the plugin reads the same on every version.
local M = {}

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end
M.has = has

--- Clients attached to `bufnr` (or all clients) with the given name.
function M.get_clients(name, bufnr)
  if vim.lsp.get_clients then -- 0.10+
    return vim.lsp.get_clients({ name = name, bufnr = bufnr })
  end
  local all = bufnr and vim.lsp.buf_get_clients(bufnr) or vim.lsp.get_active_clients()
  local found = {}
  for _, client in pairs(all) do
    if client.name == name then
      table.insert(found, client)
    end
  end
  return found
end

--- client:request on 0.11+ (method call), client.request before.
function M.request(client, method, params, handler, bufnr)
  if has("0.11") then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- client:request_sync on 0.11+, client.request_sync before: (result, err).
function M.request_sync(client, method, params, timeout_ms, bufnr)
  local response, err
  if has("0.11") then
    response, err = client:request_sync(method, params, timeout_ms, bufnr)
  else
    response, err = client.request_sync(method, params, timeout_ms, bufnr)
  end
  if not response then
    return nil, err or "no answer"
  end
  if response.err then
    return nil, response.err.message or vim.inspect(response.err)
  end
  return M.denil(response.result), nil
end

--- client:notify on 0.11+, client.notify before.
function M.client_notify(client, method, params)
  if has("0.11") then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- Walk up from `start` until a directory holds one of `markers`.
function M.find_root(start, markers)
  if vim.fs and vim.fs.find and vim.fs.dirname then -- 0.8+
    local found = vim.fs.find(markers, { path = start, upward = true })[1]
    return found and vim.fs.dirname(found) or nil
  end
  local dir = start
  while dir and dir ~= "" do
    for _, marker in ipairs(markers) do
      local candidate = dir .. "/" .. marker
      if vim.fn.isdirectory(candidate) == 1 or vim.fn.filereadable(candidate) == 1 then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  return nil
end

--- The path of `relative` (e.g. ".venv/bin/agentls") in `start` or its nearest ancestor
--- that has it, else nil. (vim.fs.find returns the file itself: its folder is `.venv/bin`.)
function M.find_file(start, relative)
  local root = M.find_root(start, { relative })
  if not root then
    return nil
  end
  if vim.fn.filereadable(root .. "/" .. relative) == 1 then -- 0.7: the root itself
    return root .. "/" .. relative
  end
  local found = root .. "/" .. vim.fn.fnamemodify(relative, ":t") -- 0.8+: the file's folder
  return vim.fn.filereadable(found) == 1 and found or nil
end

--- UTF-16 length of the first `byte_col` bytes of `line` (the LSP default encoding).
function M.utf16_col(line, byte_col)
  byte_col = math.min(byte_col, #line)
  if has("0.11") then -- signature became (s, encoding, index)
    local ok, value = pcall(vim.str_utfindex, line, "utf-16", byte_col)
    if ok and type(value) == "number" then
      return value
    end
  end
  local _, utf16 = vim.str_utfindex(line, byte_col)
  return utf16
end

--- client:is_stopped() on 0.11+, client.is_stopped() before.
function M.is_stopped(client)
  if has("0.11") then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- `value` with every vim.NIL (JSON null; 0.12 decodes notifications with it) made nil.
function M.denil(value)
  if value == vim.NIL then
    return nil
  end
  if type(value) ~= "table" then
    return value
  end
  local out = {}
  for k, v in pairs(value) do
    out[k] = M.denil(v)
  end
  return setmetatable(out, getmetatable(value))
end

--- Send the client's pending didChange notifications now (they are debounced). Neovim
--- flushes them before any other message; 0.10+ exposes the flush itself.
function M.flush_changes(client)
  local tracking = vim.lsp._changetracking
  if tracking and tracking.flush then
    local ok = pcall(tracking.flush, client)
    if ok then
      return
    end
  end
  -- 0.7-0.9: `client.notify` of any method but didChange flushes first; servers ignore
  -- `$/` notifications they do not know.
  pcall(M.client_notify, client, "$/agentls/flush", vim.empty_dict())
end

--- vim.health (0.10+) or the older `health` module, as one table of functions.
function M.health()
  if vim.health and vim.health.start then
    return vim.health
  end
  local old = require("health")
  return {
    start = old.report_start,
    ok = old.report_ok,
    info = old.report_info,
    warn = old.report_warn,
    error = old.report_error,
  }
end

local builtin_notify = vim.notify

--- `text` on one line that fits the command line (Neovim stops at "Press ENTER" for a
--- message that wraps or has several lines): lines joined with " · ", cut with "…".
function M.one_line(text)
  local line = tostring(text):gsub("%s*\n%s*", " · ")
  local room = math.max((vim.v.echospace or 80) - 1, 20)
  if vim.fn.strdisplaywidth(line) > room then
    line = vim.fn.strcharpart(line, 0, room - 1) .. "…"
  end
  return line
end

--- A notification. With Neovim's own vim.notify (it echoes) the message is kept to one
--- line; a notification plugin (nvim-notify, fidget, …) gets it whole.
function M.notify(message, level)
  vim.schedule(function()
    local text = message
    if vim.notify == builtin_notify then
      text = M.one_line(message)
      if text ~= message then -- the whole message stays readable in :AgentlsLog
        pcall(function()
          require("agentls.log").line((tostring(message):gsub("%s*\n%s*", " · ")))
        end)
      end
    end
    vim.notify(text, level or vim.log.levels.INFO, { title = "agentls" })
  end)
end

return M
