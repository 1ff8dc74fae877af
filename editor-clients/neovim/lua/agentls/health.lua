-- :checkhealth agentls — the server, its version, credentials, what this client declares,
-- and (when a server is running) its model, endpoint and symbol index.
local compat = require("agentls.compat")

local M = {}

--- The command a running client was started with, else the one vim.lsp.config holds for
--- `agentls` (0.11+: the documented vim.lsp.config + vim.lsp.enable path, no setup()).
local function configured_cmd()
  for _, running in ipairs(compat.get_clients("agentls")) do
    local cmd = running.config and running.config.cmd
    if type(cmd) == "table" then
      return cmd
    end
  end
  local ok, config = pcall(function()
    return vim.lsp.config and vim.lsp.config["agentls"]
  end)
  if ok and type(config) == "table" and type(config.cmd) == "table" then
    return config.cmd
  end
  return nil
end

local function server_cmd()
  local agentls = package.loaded["agentls"]
  local options = agentls and agentls.options or {}
  return options.cmd or configured_cmd() or require("agentls.client").default_cmd(), options
end

local function version_of(cmd)
  local argv = {}
  for _, arg in ipairs(cmd) do
    if arg == "serve" then
      break -- `agentls serve --log-file …` → `agentls --version`
    end
    table.insert(argv, arg)
  end
  table.insert(argv, "--version")
  local out = vim.fn.system(argv)
  if vim.v.shell_error ~= 0 then
    return nil, vim.trim(out)
  end
  return vim.trim(out), nil
end

local function check_server(h)
  h.start("agentls: server")
  local cmd = server_cmd()
  if not cmd then
    h.error("`agentls` is not on PATH and no `cmd` is set", {
      "pip install agentls (e.g. into the project's .venv)",
      "require('agentls').setup({ cmd = { '/path/to/.venv/bin/agentls', 'serve' } })",
    })
    return nil
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    h.error(("server command `%s` is not an executable"):format(cmd[1]), {
      "set `cmd` in require('agentls').setup({...}) to the agentls of your Python environment",
    })
    return nil
  end
  h.ok(("server command: %s"):format(table.concat(cmd, " ")))
  local version, err = version_of(cmd)
  if version then
    h.ok("version: " .. version)
  else
    h.warn("could not read the server's version: " .. tostring(err))
  end
  return cmd
end

local function check_credentials(h)
  h.start("agentls: API key or endpoint")
  local _, options = server_cmd()
  local env = vim.tbl_extend("force", {}, options.cmd_env or {})
  local function set(name)
    local value = env[name] or vim.env[name]
    return value ~= nil and value ~= ""
  end
  local settings = options.settings or {}
  if set("ANTHROPIC_API_KEY") or set("ANTHROPIC_AUTH_TOKEN") then
    h.ok("an API key is set (ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN; not shown)")
  end
  local endpoint = settings.baseUrl or env.ANTHROPIC_BASE_URL or vim.env.ANTHROPIC_BASE_URL
  if endpoint and endpoint ~= "" then
    h.ok("endpoint: " .. endpoint)
  end
  if not (set("ANTHROPIC_API_KEY") or set("ANTHROPIC_AUTH_TOKEN") or (endpoint and endpoint ~= "")) then
    h.error("no API key and no endpoint", {
      "export ANTHROPIC_API_KEY=... before starting Neovim",
      "or a local endpoint: ANTHROPIC_BASE_URL (Ollama, llama.cpp, LiteLLM) or settings.baseUrl",
    })
  end
end

local function check_client(h)
  h.start("agentls: client capabilities")
  local caps = require("agentls.client").capabilities()
  local edit = caps.workspace.workspaceEdit
  h.ok(("workspace edits: documentChanges=%s, resourceOperations=%s"):format(
    tostring(edit.documentChanges),
    table.concat(edit.resourceOperations or {}, ",")
  ))
  h.info("change annotations: not supported by Neovim — review edits with :AgentlsDiff, then :AgentlsAccept / :AgentlsReject")
  h.info(("progress: %s"):format(vim.lsp.status and "LspProgress / vim.lsp.status()" or "echoed $/progress messages"))
  h.info(("Neovim %s"):format(tostring(vim.version())))
end

local function check_running(h)
  h.start("agentls: running server")
  local client = require("agentls.client").get()
  if not client then
    h.info("no agentls client is running (open a file of your project, or :AgentlsStatus after starting one)")
    return
  end
  h.ok(("client %d attached, root %s"):format(client.id, tostring(client.config.root_dir)))
  local status, err = compat.request_sync(client, "workspace/executeCommand", {
    command = "agentls.status",
    arguments = { vim.empty_dict() },
  }, 5000)
  if not status then
    h.warn("agentls.status failed: " .. tostring(err))
    return
  end
  h.ok(("model %s, endpoint %s"):format(tostring(status.model), tostring(status.endpoint)))
  if status.credentials == false then
    h.error("the server has no credentials (no ANTHROPIC_API_KEY in its environment)")
  end
  local index = status.index or {}
  local state = tostring(index.state or "unknown")
  local line = ("symbol index: %s, %s file(s), %s symbol(s)"):format(state, tostring(index.files or 0), tostring(index.symbols or 0))
  if state == "ready" or state == "building" then
    h.ok(line)
  else
    h.warn(line)
  end
  h.ok(("%d session(s), mode %s"):format(#(status.sessions or {}), tostring(status.mode)))
end

function M.check()
  local h = compat.health()
  if vim.fn.has("nvim-0.7") ~= 1 then
    h.start("agentls")
    h.error("Neovim 0.7 or newer is required")
    return
  end
  check_server(h)
  check_credentials(h)
  check_client(h)
  check_running(h)
end

return M
