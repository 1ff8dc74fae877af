-- Headless Neovim: basedpyright attached as the user's own Python server. agentls must not
-- start a headless basedpyright of its own while the editor serves Python (issue 31, "no
-- duplicate server"), even for a query the editor answers with nothing; and it must start
-- its own clangd for C, which the editor has no server for. Run by
-- tests/test_codeintel_no_duplicate_neovim.py; writes a JSON result to $CI_RESULT.
local workspace = os.getenv("CI_WORKSPACE")
local result_path = os.getenv("CI_RESULT")
local agentls_cmd = vim.fn.json_decode(os.getenv("CI_AGENTLS_CMD"))
local pyright = os.getenv("CI_PYRIGHT")
local out = { steps = {} }

local function finish(ok, err)
  out.ok = ok
  out.error = err
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

local function client_named(name)
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  for _, c in pairs(all) do
    if c.name == name then
      return c
    end
  end
end

--- Every process below this Neovim: {pid, ppid, args}.
local function descendants()
  local rows, children = {}, {}
  for _, line in ipairs(vim.fn.systemlist({ "ps", "-ww", "-eo", "pid=,ppid=,args=" })) do
    local pid, ppid, args = line:match("^%s*(%d+)%s+(%d+)%s+(.*)$")
    if pid then
      rows[#rows + 1] = { pid = tonumber(pid), ppid = tonumber(ppid), args = args }
      children[tonumber(ppid)] = children[tonumber(ppid)] or {}
      table.insert(children[tonumber(ppid)], rows[#rows])
    end
  end
  local found, queue = {}, { vim.fn.getpid() }
  while #queue > 0 do
    local pid = table.remove(queue)
    for _, row in ipairs(children[pid] or {}) do
      found[#found + 1] = row
      queue[#queue + 1] = row.pid
    end
  end
  return found
end

local function run()
  out.nvim_pid = vim.fn.getpid()
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
  -- agentls's own Python server would be this same basedpyright: the test then sees it
  local settings = {
    languageServers = { python = { command = { pyright, "--stdio" } } },
  }
  require("agentls").setup({ cmd = agentls_cmd, root_dir = workspace, settings = settings })
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/shop/checkout.py"))
  wait_for("both clients initialized", 60000, function()
    local a, p = client_named("agentls"), client_named("basedpyright")
    return a and p and a.initialized and p.initialized and a.server_capabilities ~= nil
  end)
  wait_for("basedpyright found the project's files", 60000, function()
    return ready
  end)

  local agentls = client_named("agentls")
  local function call(command, arguments)
    local done, answer = false, nil
    local params = { command = command, arguments = arguments }
    agentls.request("workspace/executeCommand", params, function(err, result)
      answer = err and { error = err.message or vim.inspect(err) } or result
      done = true
    end, 0)
    wait_for(command .. " answered", 90000, function()
      return done
    end)
    return answer
  end
  local function tool(name, input)
    return call("agentls.tool", { { name = name, input = input } })
  end

  out.languages = require("agentls.editor_queries").handle(
    nil, { method = "agentls/languages", params = {} }, { client_id = agentls.id })
  out.references = tool("find_references", { path = "shop/legacy.py", line = 6, symbol = "total" })
  -- the editor finds no definition of an attribute of an untyped value: before issue 31's
  -- rule, agentls then asked its own (new) basedpyright
  out.definition = tool("go_to_definition", { path = "shop/dynamic.py", line = 2, symbol = "frobnicate" })
  out.after_python = descendants()
  -- C: Neovim has no server for it, so agentls starts its own clangd
  out.c_references = tool("find_references", { path = "native.c", line = 1, symbol = "add" })
  out.after_c = descendants()
  out.status = call("agentls.status", {})
end

local ok, err = pcall(run)
finish(ok, not ok and tostring(err) or nil)
