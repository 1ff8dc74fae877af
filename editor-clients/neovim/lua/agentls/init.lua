-- agentls for Neovim: `require("agentls").setup({...})`.
--
-- Options (all optional):
--   cmd          server command (default: `agentls serve` from PATH)
--   cmd_env      extra environment for the server (e.g. ANTHROPIC_BASE_URL)
--   settings     the `agentls` settings section (model, baseUrl, mode, maxTurns, …),
--                sent as initializationOptions and as workspace/didChangeConfiguration
--   filetypes    only attach to these filetypes (default: every file buffer)
--   root_dir     string or function(bufnr) → root (default: nearest of root_markers, else cwd)
--   root_markers files/dirs that mark a workspace root
--   autostart    start the server for matching buffers (default true)
--   use_lsp_config  on 0.11+, register through vim.lsp.config/enable (default true)
--   commands     create the :Agentls* commands (default true)
--   progress     echo $/progress messages (default true; 0.10+ shows them through
--                LspProgress / vim.lsp.status() and echoes only the outcome)
--   view         open the session side buffer when a run starts (default true)
--   save_edits   write files the agent's accepted edits changed, unless they had unsaved
--                changes of yours (default true; false leaves them modified)
--   questions    answer the agent's questions and plans with vim.ui.select / vim.ui.input
--                (default true; false: the server asks with plain message requests)
--   on_attach    passed through to the client
local M = {}

local commands = require("agentls.commands")
local client = require("agentls.client")
local log = require("agentls.log")

M.options = {}

function M.setup(opts)
  M.options = vim.tbl_extend("force", {}, opts or {})
  require("agentls.view").options.auto_open = M.options.view ~= false
  require("agentls.edits").options.save = M.options.save_edits ~= false
  require("agentls.editor_queries").setup(M.options) -- answer agentls/editorQuery (docs/code-intelligence.md)
  require("agentls.questions").setup(M.options) -- agentls/askQuestions, agentls/reviewPlan (vim.ui)
  if M.options.commands ~= false then
    commands.create_user_commands()
  end
  if M.options.autostart ~= false then
    M.start_method = client.autostart(M.options)
  end
  return M
end

--- Client configuration for other launchers, e.g. nvim-lspconfig's custom-server form:
---   require("lspconfig.configs").agentls = { default_config = require("agentls").lspconfig({...}) }
---   require("lspconfig").agentls.setup({})
function M.lspconfig(opts)
  opts = vim.tbl_extend("force", M.options, opts or {})
  local config = client.config(opts)
  config.name = nil
  config.root_markers = nil
  local markers = opts.root_markers or client.ROOT_MARKERS
  config.root_dir = function(fname)
    local ok, util = pcall(require, "lspconfig.util")
    if ok then
      return util.root_pattern(unpack(markers))(fname) or vim.fn.getcwd()
    end
    return require("agentls.compat").find_root(vim.fn.fnamemodify(fname, ":p:h"), markers) or vim.fn.getcwd()
  end
  config.filetypes = opts.filetypes
  return config
end

--- Start and attach to a buffer by hand (when autostart = false).
function M.attach(bufnr)
  return client.attach(bufnr, M.options)
end

M.run = commands.run
M.ask = commands.ask
M.fix = commands.fix
M.cancel = commands.cancel
M.accept = commands.accept
M.reject = commands.reject
M.status = commands.status
M.transcript = commands.transcript
M.diff = function(session)
  return require("agentls.diff").open(session)
end
M.view = function(session, focus)
  return require("agentls.view").open(session, focus)
end
M.execute = commands.execute
M.statusline = log.statusline
M.log = log
M.client = client.get

return M
