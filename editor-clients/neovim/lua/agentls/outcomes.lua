-- What became of a run's or an accept's edits, told where the user looks (a notification),
-- with the commands that act on it. Fed by the server's `run_result` / `edit_result`
-- events, so code actions and other plugins' calls are reported too.
local compat = require("agentls.compat")

local M = {}

local WARN = vim.log.levels.WARN

--- What to do about staged files, in this editor's words: short, and said early in each
--- message, so it is seen on the one line Neovim's own vim.notify shows.
M.ACTIONS = ":AgentlsDiff/Accept/Reject"

local function name(uri)
  return vim.fn.fnamemodify(vim.uri_to_fname(uri), ":~:.")
end

local function names(uris)
  local out = {}
  for _, uri in ipairs(uris or {}) do
    table.insert(out, name(uri))
  end
  return table.concat(out, ", ")
end

local function left_out(items)
  local out = {}
  for _, item in ipairs(items or {}) do
    table.insert(out, ("%s: %s"):format(name(item.uri), item.reason or "not applied"))
  end
  return table.concat(out, "; ")
end

--- The message for an edit outcome `{files, applied, reason, left_out}`, or nil when there
--- is nothing to say. `what`: "run" or "accept".
function M.describe_edit(edit, session, what)
  edit = type(edit) == "table" and edit or {}
  local files, left = edit.files or {}, edit.left_out or {}
  if #files == 0 and #left == 0 then
    if what == "accept" then
      return ("agentls: nothing staged in session %s"):format(session), nil
    end
    return nil
  end
  if edit.applied == true then
    local message = ("agentls: applied %d file(s) of session %s: %s"):format(#files, session, names(files))
    if #left > 0 then
      return message .. " · left out, still staged (" .. M.ACTIONS .. "): " .. left_out(left), WARN
    end
    return message, nil
  end
  if edit.applied == false then
    local why = #left > 0 and left_out(left) or (edit.reason or "refused")
    return ("agentls: nothing was applied, %s · session %s: %s"):format(M.ACTIONS, session, why), WARN
  end
  local staged = ("agentls: %d file(s) staged for review, %s · session %s: %s"):format(
    #files,
    M.ACTIONS,
    session,
    names(files)
  )
  return staged, nil
end

--- `run_result` event → notification.
function M.on_run_result(event)
  local session = event.session_id
  local status = tostring(event.status)
  local message, level = M.describe_edit(event.edit, session, "run")
  if status == "cancelled" and message and type(event.edit) == "table" and event.edit.applied == nil then
    message = message:gsub("^agentls: ", "agentls: the cancelled run left ", 1)
    level = WARN
  end
  if status == "failed" then
    compat.notify(("agentls: run %s failed: %s"):format(session, tostring(event.error or "unknown error")), vim.log.levels.ERROR)
  elseif status ~= "completed" and status ~= "cancelled" then
    compat.notify(("agentls: run %s ended: %s"):format(session, event.outcome or status), WARN)
  end
  if message then
    compat.notify(message, level)
  end
  M.last = message
end

--- `edit_result` event (after an accept or reject, whoever asked) → notification.
function M.on_edit_result(event)
  local session = event.session_id
  local message, level
  if event.action == "reject" then
    local files = event.files or {}
    message = #files > 0 and ("agentls: rejected %d file(s) of session %s: %s"):format(#files, session, names(files))
      or ("agentls: nothing staged in session %s"):format(session)
  else
    message, level = M.describe_edit(event, session, "accept")
  end
  if message then
    compat.notify(message, level)
  end
  M.last = message
end

return M
