-- `agentls.status` as readable lines for :AgentlsStatus: sessions, the sandbox (and the fix
-- when it cannot run), workspace trust (what is held back) and code intelligence (which
-- language servers run, for which languages, and why one does not). Pure: unit-tested.
local M = {}

local function str(value)
  if value == nil or value == vim.NIL then
    return ""
  end
  if type(value) == "table" then
    return vim.inspect(value, { newline = " ", indent = "" })
  end
  return tostring(value)
end

local function list(value)
  return type(value) == "table" and value or {}
end

local function sandbox_line(sandbox)
  if sandbox.enabled == false then
    return "off (sandbox.enabled: false)"
  end
  if sandbox.available ~= true then
    return "unavailable"
  end
  local network = sandbox.network == "off" and "network off" or "network limited"
  return ("on (%s, %s)"):format(str(sandbox.backend), network)
end

local TRUST = {
  trusted = "trusted",
  not_needed = "nothing to trust",
  disabled = "project settings held back (trustProjectSettings: false)",
  untrusted = "not trusted (its settings that loosen safety are held back)",
  pending = "not trusted yet (its settings that loosen safety are held back)",
}

local function code_intel_line(entry)
  if entry.source == "editor" then
    local methods = table.concat(list(entry.methods), ", ")
    local line = "editor: " .. str(entry.state)
    if methods ~= "" then
      line = line .. " (" .. methods .. ")"
    end
    if str(entry.reason) ~= "" then
      line = line .. " — " .. str(entry.reason)
    end
    return line
  end
  local server = str(entry.server)
  -- no server found: the state and the reason say why
  local line = ("%s: %s%s"):format(str(entry.language), server ~= "" and (server .. " ") or "", str(entry.state))
  if str(entry.origin) ~= "" then
    line = line .. " from " .. str(entry.origin)
  end
  if str(entry.pid) ~= "" then
    line = line .. ", pid " .. str(entry.pid)
  end
  if str(entry.reason) ~= "" then
    line = line .. " — " .. str(entry.reason)
  end
  return line
end

--- The lines of the status view.
function M.lines(status)
  local lines = { "agentls status" }
  if type(status) ~= "table" then
    table.insert(lines, "  (no status)")
    return lines
  end
  table.insert(lines, ("  model: %s   endpoint: %s   mode: %s"):format(str(status.model), str(status.endpoint), str(status.mode)))
  for _, s in ipairs(list(status.sessions)) do
    table.insert(lines, ("  session %s: %s, %s turn(s)%s"):format(str(s.id), str(s.status), str(s.turns), s.running == true and " (running)" or ""))
  end
  local sandbox = status.sandbox
  if type(sandbox) == "table" then
    table.insert(lines, ("  sandbox: %s — %s"):format(sandbox_line(sandbox), str(sandbox.message)))
    if sandbox.available ~= true and sandbox.enabled ~= false then
      if str(sandbox.fix) ~= "" then
        table.insert(lines, "    fix: " .. str(sandbox.fix))
      end
      local fallback = {}
      for tool, mode in pairs(list(sandbox.fallback)) do
        table.insert(fallback, tool .. ": " .. str(mode))
      end
      table.sort(fallback)
      if #fallback > 0 then
        table.insert(lines, "    without it: " .. table.concat(fallback, ", "))
      end
    end
    if sandbox.network ~= nil and sandbox.network ~= "off" and sandbox.network ~= vim.NIL then
      table.insert(lines, "    network: " .. str(sandbox.network))
    end
    if str(sandbox.limits) ~= "" then
      table.insert(lines, "    limits: " .. str(sandbox.limits))
    end
  end
  local trust = status.trust
  if type(trust) == "table" then
    table.insert(lines, "  workspace trust: " .. (TRUST[trust.state] or str(trust.state)))
    for _, item in ipairs(list(trust.held_back)) do
      local detail = str(item.detail) ~= "" and (": " .. str(item.detail)) or ""
      table.insert(lines, ("    held back: %s%s (%s)"):format(str(item.setting), detail, str(item.source)))
    end
  end
  local intel = list(status.code_intel)
  if #intel > 0 then
    table.insert(lines, "  code intelligence:")
    for _, entry in ipairs(intel) do
      table.insert(lines, "    " .. code_intel_line(entry))
    end
  end
  return lines
end

return M
