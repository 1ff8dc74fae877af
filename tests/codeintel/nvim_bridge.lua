-- Headless Neovim: the agentls plugin plus basedpyright as the user's own Python server,
-- and typescript-language-server as its TypeScript one; the agent's find_references /
-- hover / diagnostics / code_actions / call_hierarchy (through `agentls.tool`) must be
-- answered by basedpyright *through the editor* (source 1), and find_implementations
-- (which basedpyright does not answer) by typescript-language-server. Run by
-- tests/test_codeintel_editor_neovim.py; writes a JSON result to $CI_RESULT.
local workspace = os.getenv("CI_WORKSPACE")
local result_path = os.getenv("CI_RESULT")
local agentls_cmd = vim.fn.json_decode(os.getenv("CI_AGENTLS_CMD"))
local pyright = os.getenv("CI_PYRIGHT")
local tsls = os.getenv("CI_TSLS")
local out = { steps = {} }

local function finish(ok, err)
  out.ok = ok
  out.error = err
  out.nvim = tostring(vim.version().major) .. "." .. vim.version().minor .. "." .. vim.version().patch
  out.messages = vim.fn.execute("messages")
  vim.fn.writefile({ vim.fn.json_encode(out) }, result_path)
  vim.cmd("qall!")
end

local function wait_for(what, ms, predicate)
  if not vim.wait(ms, predicate, 50) then
    error("timed out after " .. ms .. " ms waiting for " .. what, 0)
  end
  table.insert(out.steps, what)
end

local function clients()
  return vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
end

local function client_named(name)
  for _, c in pairs(clients()) do
    if c.name == name then
      return c
    end
  end
end

local function run()
  -- The user's configuration: basedpyright on every Python buffer (as lspconfig would do).
  local ready = false
  local pyright_id = vim.lsp.start_client({
    name = "basedpyright",
    cmd = { pyright, "--stdio" },
    root_dir = workspace,
    workspace_folders = { { uri = vim.uri_from_fname(workspace), name = "shop" } },
    handlers = {
      ["window/logMessage"] = function(_, params)
        if params and params.message and params.message:match("^Found %d+ source file") then
          ready = true
        end
      end,
    },
  })
  vim.api.nvim_create_autocmd("BufReadPost", {
    pattern = "*.py",
    callback = function(args)
      vim.lsp.buf_attach_client(args.buf, pyright_id)
    end,
  })
  local tsls_id = vim.lsp.start_client({
    name = "typescript-language-server",
    cmd = { tsls, "--stdio" },
    root_dir = workspace,
    workspace_folders = { { uri = vim.uri_from_fname(workspace), name = "shop" } },
  })
  vim.api.nvim_create_autocmd("BufReadPost", {
    pattern = "*.ts",
    callback = function(args)
      vim.lsp.buf_attach_client(args.buf, tsls_id)
    end,
  })
  require("agentls").setup({ cmd = agentls_cmd, root_dir = workspace })
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/shop/checkout.py"))
  wait_for("both clients initialized", 60000, function()
    local a, p = client_named("agentls"), client_named("basedpyright")
    return a and p and a.initialized and p.initialized and a.server_capabilities ~= nil
  end)
  wait_for("basedpyright found the project's files", 60000, function()
    return ready
  end)

  local agentls = client_named("agentls")
  local function tool(name, input)
    local done, answer = false, nil
    local params = { command = "agentls.tool", arguments = { { name = name, input = input } } }
    agentls.request("workspace/executeCommand", params, function(err, result)
      answer = err and { error = err.message or vim.inspect(err) } or result
      done = true
    end, 0)
    wait_for(name .. " answered", 60000, function()
      return done
    end)
    return answer
  end

  -- legacy.py is not open: the plugin loads it and basedpyright attaches to answer.
  out.legacy_loaded_before = vim.fn.bufloaded(workspace .. "/shop/legacy.py")
  out.references = tool("find_references", { path = "shop/legacy.py", line = 6, symbol = "total" })
  out.legacy_loaded_after = vim.fn.bufloaded(workspace .. "/shop/legacy.py")
  out.hover = tool("hover", { path = "shop/checkout.py", line = 5, symbol = "total" })
  -- a type error typed into the buffer (unsaved): the editor's diagnostics see it
  vim.api.nvim_buf_set_lines(0, 4, 5, false, { '    return cart.total("x")' })
  wait_for("basedpyright reports the error", 30000, function()
    return #vim.diagnostic.get(0, { severity = vim.diagnostic.severity.ERROR }) > 0
  end)
  out.diagnostics = tool("diagnostics", { paths = { "shop/checkout.py" }, severity = "error" })
  out.calls = tool("call_hierarchy", { path = "shop/models.py", line = 2, symbol = "total", direction = "incoming" })
  -- TypeScript, before any edit is staged (the editor is not asked then): the interface's
  -- file loaded as a user would open it, then the agent's find_implementations once
  -- tsserver has loaded the project (until then it answers from the open file alone: no
  -- implementations at all)
  local shapes = workspace .. "/web/shapes.ts"
  local shapes_buf = vim.fn.bufadd(shapes)
  vim.fn.bufload(shapes_buf)
  vim.api.nvim_buf_call(shapes_buf, function()
    vim.cmd("silent! filetype detect")
  end)
  local ts = vim.lsp.get_client_by_id(tsls_id)
  wait_for("typescript-language-server attached", 60000, function()
    return ts.initialized and vim.lsp.buf_is_attached(shapes_buf, tsls_id)
  end)
  local at = { textDocument = { uri = vim.uri_from_fname(shapes) }, position = { line = 1, character = 2 } }
  local deadline, found = vim.loop.now() + 60000, 0
  while found < 2 and vim.loop.now() < deadline do
    local answer = ts.request_sync("textDocument/implementation", at, 20000, shapes_buf)
    found = answer and type(answer.result) == "table" and #answer.result or 0
    if found < 2 then
      vim.wait(500)
    end
  end
  wait_for("tsserver loaded the project", 0, function()
    return found >= 2
  end)
  out.implementations = tool("find_implementations", { path = "web/shapes.ts", line = 2, symbol = "area" })
  -- code actions for that error come from basedpyright through the editor, with the
  -- buffer's diagnostics as context; applying one stages its edit in the session
  local where = { path = "shop/checkout.py", line = 5 }
  out.code_actions = tool("code_actions", where)
  where.apply = "1"
  out.code_action_applied = tool("code_actions", where)
  out.after_action = tool("read_file", { path = "shop/checkout.py" })
  out.buffer_after_action = vim.api.nvim_buf_get_lines(0, 4, 5, false)[1]
  tool("code_actions", { path = "shop/checkout.py", line = 1 }) -- warm, harmless
end

local ok, err = pcall(run)
finish(ok, not ok and tostring(err) or nil)
