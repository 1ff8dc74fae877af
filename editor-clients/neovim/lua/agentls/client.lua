-- Starting the server and finding its client, on every supported Neovim.
--
-- 0.11+: `vim.lsp.config` + `vim.lsp.enable` when `use_lsp_config` is on (the default);
-- 0.8+: `vim.lsp.start` (reuses a client per root) from a FileType/BufEnter autocmd;
-- 0.7: `vim.lsp.start_client` + `vim.lsp.buf_attach_client`, reusing clients by root here.
local compat = require("agentls.compat")
local log = require("agentls.log")

local M = {}

M.NAME = "agentls"
M.ROOT_MARKERS = { ".agentls.toml", ".git", "pyproject.toml", "package.json", "Cargo.toml", "go.mod" }

--- The server command: `agentls serve` from PATH, else from a `.venv` in the working
--- directory or one of its parents.
function M.default_cmd()
  if vim.fn.executable("agentls") == 1 then
    return { "agentls", "serve" }
  end
  local venv = compat.find_file(vim.fn.getcwd(), ".venv/bin/agentls")
  if venv then
    return { venv, "serve" }
  end
  return nil
end

--- What this client can do: Neovim's own capabilities plus what it really handles but does
--- not advertise (versioned documentChanges with create/rename/delete), minus change
--- annotations, and the agentls flags: it renders run results itself and sends its
--- didChanges before answering an edit.
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.workspaceEdit = vim.tbl_extend("force", caps.workspace.workspaceEdit or {}, {
    documentChanges = true,
    resourceOperations = { "create", "rename", "delete" },
  })
  -- 0.12 confirms annotated edits with a yes/no prompt that shows no diff: keep review-mode
  -- edits staged instead, for :AgentlsDiff (a real diff, per file) on every version
  -- (vim.NIL, not nil: 0.11+ deep-merges this table into its defaults)
  if caps.workspace.workspaceEdit.changeAnnotationSupport ~= nil then
    caps.workspace.workspaceEdit.changeAnnotationSupport = vim.NIL
  end
  caps.experimental = vim.tbl_extend("force", caps.experimental or {}, {
    agentls = { runResults = true, syncBeforeApplyReply = true, questions = true, planReview = true },
  })
  return caps
end

local function progress_handler(opts)
  local default = vim.lsp.handlers["$/progress"]
  return function(err, result, ctx, config)
    if default then
      default(err, result, ctx, config)
    end
    if opts.progress == false or type(result) ~= "table" or type(result.value) ~= "table" then
      return
    end
    if vim.lsp.status and result.value.kind ~= "end" then
      return -- 0.10+: shown through LspProgress / vim.lsp.status(); the end is echoed
    end
    local value = result.value
    local text = value.title or value.message
    if value.kind == "report" or value.kind == "end" then
      text = value.message
    end
    if text and text ~= "" then
      -- the server's titles already say "agentls: "; one line that fits, or Neovim waits for ENTER
      local line = compat.one_line("agentls: " .. text:gsub("^agentls: ", ""))
      vim.api.nvim_echo({ { line, "Comment" } }, false, {})
    end
  end
end

--- The client configuration shared by every start path (and by lspconfig's custom form).
function M.config(opts)
  local cmd = opts.cmd or M.default_cmd()
  local handlers = {
    ["agentls/event"] = log.on_event,
    ["$/progress"] = progress_handler(opts),
    ["workspace/applyEdit"] = require("agentls.edits").apply_edit_handler,
  }
  -- an empty Lua table would go out as a JSON list; the server wants an object
  local settings = opts.settings or vim.empty_dict()
  return {
    name = M.NAME,
    cmd = cmd,
    cmd_env = opts.cmd_env,
    filetypes = opts.filetypes,
    root_markers = opts.root_markers or M.ROOT_MARKERS,
    capabilities = M.capabilities(),
    init_options = settings,
    settings = { agentls = settings },
    handlers = handlers,
    on_attach = opts.on_attach,
    on_init = function(client)
      -- Send the settings section once more as didChangeConfiguration (the contract accepts both).
      local current = client.config and client.config.settings or { agentls = settings }
      compat.client_notify(client, "workspace/didChangeConfiguration", { settings = current })
    end,
  }
end

local function root_for(bufnr, opts)
  if type(opts.root_dir) == "function" then
    return opts.root_dir(bufnr)
  elseif type(opts.root_dir) == "string" then
    return opts.root_dir
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= "" and vim.fn.fnamemodify(name, ":p:h") or vim.fn.getcwd()
  return compat.find_root(start, opts.root_markers or M.ROOT_MARKERS) or vim.fn.getcwd()
end

local function attachable(bufnr, opts)
  if vim.bo[bufnr].buftype ~= "" then
    return false
  end
  if vim.api.nvim_buf_get_name(bufnr) == "" then
    return false
  end
  if opts.filetypes then
    return vim.tbl_contains(opts.filetypes, vim.bo[bufnr].filetype)
  end
  return true
end

local clients_by_root = {} -- 0.7 path: root → client id
local reported = {} -- start-up errors already shown (one message, not one per buffer)

local function report_once(message)
  if not reported[message] then
    reported[message] = true
    compat.notify(message, vim.log.levels.ERROR)
  end
end

--- Start (or reuse) the client for `bufnr`'s root and attach it. Returns the client id.
function M.attach(bufnr, opts)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not attachable(bufnr, opts) then
    return nil
  end
  local config = M.config(opts)
  if not config.cmd then
    report_once(
      "agentls: cannot start the server: `agentls` is not on PATH; set `cmd` in "
        .. "require('agentls').setup({cmd = {'/path/to/.venv/bin/agentls', 'serve'}})"
    )
    return nil
  end
  if vim.fn.executable(config.cmd[1]) ~= 1 then
    report_once(
      ("agentls: the server command `%s` is not an executable; set `cmd` in "):format(config.cmd[1])
        .. "require('agentls').setup({cmd = {'/path/to/.venv/bin/agentls', 'serve'}})"
    )
    return nil
  end
  local root = root_for(bufnr, opts)
  config.root_markers = nil -- only vim.lsp.config knows this key
  config.root_dir = root
  config.workspace_folders = { { uri = vim.uri_from_fname(root), name = root } }
  local failed = "agentls: the server failed to start (" .. table.concat(config.cmd, " ") .. "): "
  if vim.lsp.start then -- 0.8+: reuses a client with the same name and root
    local ok, id = pcall(vim.lsp.start, config, { bufnr = bufnr })
    if not ok then
      report_once(failed .. tostring(id))
      return nil
    end
    return id
  end
  local id = clients_by_root[root]
  if not id or not vim.lsp.get_client_by_id(id) or compat.is_stopped(vim.lsp.get_client_by_id(id)) then
    local ok, started = pcall(vim.lsp.start_client, config)
    if not ok or not started then
      report_once(failed .. tostring(started or "no client id"))
      return nil
    end
    id = started
    clients_by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- Register automatic start-up for matching buffers.
function M.autostart(opts)
  if opts.use_lsp_config ~= false and vim.lsp.config and vim.lsp.enable and type(vim.lsp.config) == "table" then
    local config = M.config(opts)
    config.name = nil
    if type(opts.root_dir) == "string" then
      config.root_dir = opts.root_dir
    elseif type(opts.root_dir) == "function" then
      config.root_dir = function(bufnr, on_dir) -- 0.11's form
        on_dir(opts.root_dir(bufnr))
      end
    end
    vim.lsp.config(M.NAME, config)
    vim.lsp.enable(M.NAME)
    return "vim.lsp.config"
  end
  local group = vim.api.nvim_create_augroup("agentls_autostart", { clear = true })
  vim.api.nvim_create_autocmd({ "FileType", "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      M.attach(args.buf, opts)
    end,
  })
  -- Buffers already loaded when setup() runs.
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf, opts)
    end
  end
  return vim.lsp.start and "vim.lsp.start" or "vim.lsp.start_client"
end

--- The agentls client for `bufnr`, else any running agentls client.
function M.get(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local attached = compat.get_clients(M.NAME, bufnr)
  if attached[1] then
    return attached[1]
  end
  return compat.get_clients(M.NAME)[1]
end

return M
