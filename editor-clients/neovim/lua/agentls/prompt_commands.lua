-- Custom commands (`/name args`, .claude/commands/*.md): completion for :AgentlsRun.
--
-- `:AgentlsRun /<Tab>` lists the commands the server knows (`agentls.commands`), with
-- their argument hint; the server expands `/name args` when the run starts, and an
-- unknown name fails with the list of known ones.
local M = {}

local TIMEOUT_MS = 2000

--- The commands from the server (a synchronous request: completion cannot wait).
function M.list(bufnr)
  local c = require("agentls.client").get(bufnr)
  if not c then
    return {}
  end
  local params = { command = "agentls.commands", arguments = { vim.empty_dict() } }
  local compat = require("agentls.compat")
  local ok, result = pcall(compat.request_sync, c, "workspace/executeCommand", params, TIMEOUT_MS, bufnr or 0)
  if not ok or type(result) ~= "table" then
    return {}
  end
  return result.commands or {}
end

--- `complete` of :AgentlsRun: "/name" for the first argument when it starts with "/".
function M.complete(arglead, cmdline, _)
  local before = cmdline:match("^%s*%S+%s+(.*)$") or ""
  if not arglead:match("^/") or before ~= arglead then
    return {}
  end
  local items = {}
  for _, command in ipairs(M.list()) do
    local item = "/" .. command.name
    if item:sub(1, #arglead) == arglead then
      table.insert(items, item)
    end
  end
  table.sort(items)
  return items
end

--- vim.ui.select over the commands, then the arguments, then the run.
function M.pick()
  local commands = M.list()
  if #commands == 0 then
    require("agentls.compat").notify("agentls: no custom commands (.claude/commands/*.md)", vim.log.levels.INFO)
    return
  end
  vim.ui.select(commands, {
    prompt = "agentls command",
    format_item = function(c)
      return ("/%s  %s"):format(c.name, c.description or "")
    end,
  }, function(choice)
    if not choice then
      return
    end
    local hint = choice.argument_hint and (" " .. choice.argument_hint) or ""
    vim.ui.input({ prompt = ("/%s%s: "):format(choice.name, hint) }, function(args)
      if args == nil then
        return
      end
      local prompt = "/" .. choice.name .. (args ~= "" and (" " .. args) or "")
      require("agentls.commands").run(prompt, {})
    end)
  end)
end

return M
