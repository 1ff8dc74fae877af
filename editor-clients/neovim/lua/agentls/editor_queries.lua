-- Answers the server's `agentls/editorQuery` requests from the *other* language servers
-- attached to a buffer (pyright, tsserver, gopls, …), so the agent's go_to_definition,
-- find_references, hover, diagnostics and rename use exactly what the editor uses.
--
-- The request is `{method, params}`: an LSP method with its params (positions in the
-- agentls client's encoding), or `agentls/diagnostics` with `{uris}`. The answer is
-- `{result, source}` (`source`: the answering client's name). A buffer that is not loaded
-- is loaded (and its filetype detected, so the user's servers attach); with no other
-- server to ask, the answer is an error and agentls asks its next source.
-- Works on Neovim 0.7 through 0.11: every newer API goes through agentls.compat.
local compat = require("agentls.compat")

local M = {}

M.METHODS = {
  "textDocument/definition",
  "textDocument/references",
  "textDocument/hover",
  "textDocument/rename",
  "textDocument/implementation",
  "textDocument/typeDefinition",
  "textDocument/prepareCallHierarchy",
  "callHierarchy/incomingCalls",
  "callHierarchy/outgoingCalls",
  "textDocument/codeAction",
  "codeAction/resolve",
  "textDocument/documentSymbol",
  "workspace/symbol",
  "agentls/diagnostics",
  "agentls/languages",
}
M.timeout_ms = 4500 -- below the server's default editorQueryTimeout (5 s)

local CAPABILITY = {
  ["textDocument/definition"] = "definitionProvider",
  ["textDocument/references"] = "referencesProvider",
  ["textDocument/hover"] = "hoverProvider",
  ["textDocument/rename"] = "renameProvider",
  ["textDocument/implementation"] = "implementationProvider",
  ["textDocument/typeDefinition"] = "typeDefinitionProvider",
  ["textDocument/prepareCallHierarchy"] = "callHierarchyProvider",
  ["callHierarchy/incomingCalls"] = "callHierarchyProvider",
  ["callHierarchy/outgoingCalls"] = "callHierarchyProvider",
  ["textDocument/codeAction"] = "codeActionProvider",
  ["codeAction/resolve"] = "codeActionProvider",
  ["textDocument/documentSymbol"] = "documentSymbolProvider",
  ["workspace/symbol"] = "workspaceSymbolProvider",
}
local METHOD_NOT_FOUND = -32601
local buffer_diagnostics -- defined below, used by ask_clients
local REQUEST_FAILED = -32803

local function response_error(code, message)
  local rpc = vim.lsp.rpc
  local make = (rpc and rpc.rpc_response_error) or vim.lsp.rpc_response_error
  return make(code, message)
end

-- Column conversion between encodings, through the line's byte offsets -----------------

local function to_byte(line, units, encoding)
  if encoding == "utf-8" then
    return math.min(units, #line)
  end
  local ok, byte = pcall(vim.str_byteindex, line, units, encoding == "utf-16")
  if not ok then
    ok, byte = pcall(vim.str_byteindex, line, encoding, units, false) -- 0.11's form
  end
  return ok and byte or #line
end

local function from_byte(line, byte, encoding)
  byte = math.min(byte, #line)
  if encoding == "utf-8" then
    return byte
  elseif encoding == "utf-16" then
    return compat.utf16_col(line, byte)
  end
  if compat.has("0.11") then
    local ok, value = pcall(vim.str_utfindex, line, "utf-32", byte)
    if ok and type(value) == "number" then
      return value
    end
  end
  return (vim.str_utfindex(line, byte))
end

local function line_of(uri, lnum)
  local bufnr = vim.uri_to_bufnr(uri)
  if vim.api.nvim_buf_is_loaded(bufnr) then
    return vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1] or ""
  end
  local ok, lines = pcall(vim.fn.readfile, vim.uri_to_fname(uri), "", lnum + 1)
  return ok and lines[lnum + 1] or ""
end

local function convert_position(uri, position, from, to)
  if from == to or type(position) ~= "table" then
    return position
  end
  local line = line_of(uri, position.line)
  return { line = position.line, character = from_byte(line, to_byte(line, position.character, from), to) }
end

local function convert_range(uri, range, from, to)
  if from == to or type(range) ~= "table" then
    return range
  end
  return {
    start = convert_position(uri, range.start, from, to),
    ["end"] = convert_position(uri, range["end"], from, to),
  }
end

--- Positions and ranges inside a result or params, rewritten for another encoding.
local function convert_locations(items, from, to)
  if type(items) ~= "table" or from == to then
    return items
  end
  local is_list = vim.islist or vim.tbl_islist
  local list = is_list(items) and items or { items }
  for _, item in ipairs(list) do
    if item.targetUri then
      item.targetRange = convert_range(item.targetUri, item.targetRange, from, to)
      item.targetSelectionRange = convert_range(item.targetUri, item.targetSelectionRange, from, to)
    elseif item.uri and item.range then
      item.range = convert_range(item.uri, item.range, from, to)
    elseif item.location and item.location.uri then -- workspace symbols
      item.location.range = convert_range(item.location.uri, item.location.range, from, to)
    end
  end
  return items
end

local function convert_workspace_edit(edit, from, to)
  if type(edit) ~= "table" or from == to then
    return edit
  end
  for uri, edits in pairs(edit.changes or {}) do
    for _, text_edit in ipairs(edits) do
      text_edit.range = convert_range(uri, text_edit.range, from, to)
    end
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument and change.edits then
      for _, text_edit in ipairs(change.edits) do
        text_edit.range = convert_range(change.textDocument.uri, text_edit.range, from, to)
      end
    end
  end
  return edit
end

-- Buffers and clients ---------------------------------------------------------------------

--- The buffer of `uri`, loaded (with its filetype detected) when it was not; the second
--- value says whether it was loaded just now.
local function ensure_buffer(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  local fresh = not vim.api.nvim_buf_is_loaded(bufnr)
  if fresh then
    vim.fn.bufload(bufnr)
  end
  if vim.bo[bufnr].filetype == "" then
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd("silent! filetype detect")
    end)
  end
  return bufnr, fresh
end

local function stopped(client)
  if compat.has("0.11") then
    return client:is_stopped()
  end
  return client.is_stopped()
end

local function clients_of(bufnr)
  if vim.lsp.get_clients then -- 0.10+
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  if bufnr then
    return vim.lsp.buf_get_clients(bufnr)
  end
  return vim.lsp.get_active_clients()
end

local function capable(client, method)
  local caps = client.server_capabilities or {}
  local key = CAPABILITY[method]
  if method == "codeAction/resolve" then
    return type(caps.codeActionProvider) == "table" and caps.codeActionProvider.resolveProvider == true
  end
  return key ~= nil and caps[key] ~= nil and caps[key] ~= false
end

--- Clients other than agentls that can answer `method` (for `bufnr`, or any client).
local function other_clients(bufnr, agentls_id, method)
  local found = {}
  for _, client in pairs(clients_of(bufnr)) do
    if client.id ~= agentls_id and not stopped(client) and capable(client, method) then
      table.insert(found, client)
    end
  end
  table.sort(found, function(a, b)
    return a.id < b.id
  end)
  return found
end

local function empty(result)
  return result == nil or result == vim.NIL or (type(result) == "table" and vim.tbl_isempty(result))
end

--- The client's own diagnostics on the lines of `range` (quick fixes are keyed on them),
--- as it published them (`user_data.lsp`).
buffer_diagnostics = function(bufnr, range, client)
  local found = {}
  if not bufnr or type(range) ~= "table" then
    return found
  end
  local namespace = vim.lsp.diagnostic.get_namespace(client.id)
  for _, d in ipairs(vim.diagnostic.get(bufnr, { namespace = namespace })) do
    local last = d.end_lnum or d.lnum
    if d.lnum <= range["end"].line and last >= range.start.line then
      local lsp = d.user_data and d.user_data.lsp
      if lsp then
        found[#found + 1] = lsp
      end
    end
  end
  return found
end

--- Ask every capable client; the first non-empty answer wins (in client order).
local function ask_clients(clients, method, params, encoding, bufnr)
  local answers, errors, pending = {}, {}, #clients
  for index, client in ipairs(clients) do
    local theirs = client.offset_encoding or "utf-16"
    local own = vim.deepcopy(params)
    if own.textDocument and own.position then
      own.position = convert_position(own.textDocument.uri, own.position, encoding, theirs)
    end
    if method == "textDocument/codeAction" and own.textDocument then
      own.range = convert_range(own.textDocument.uri, own.range, encoding, theirs)
      own.context = own.context or {}
      if #(own.context.diagnostics or {}) == 0 then
        own.context.diagnostics = buffer_diagnostics(bufnr, own.range, client)
      end
    end
    local ok = pcall(compat.request, client, method, own, function(err, result)
      if err then
        errors[#errors + 1] = client.name .. ": " .. tostring(err.message or vim.inspect(err))
      else
        answers[index] = { client = client, result = result, encoding = theirs }
      end
      pending = pending - 1
    end, bufnr)
    if not ok then
      pending = pending - 1
    end
  end
  vim.wait(M.timeout_ms, function()
    return pending <= 0
  end, 10)
  return answers, errors
end

local function convert_item(item, from, to)
  if type(item) == "table" and item.uri then
    item.range = convert_range(item.uri, item.range, from, to)
    item.selectionRange = convert_range(item.uri, item.selectionRange, from, to)
  end
  return item
end

local function convert_calls(calls, method, from, to)
  if type(calls) ~= "table" or from == to then
    return calls
  end
  for _, call in ipairs(calls) do
    local other = call.from or call.to
    convert_item(other, from, to)
  end
  return calls
end

local function answer_for(method, answer, encoding)
  local result = answer.result
  if method == "textDocument/rename" then
    result = convert_workspace_edit(result, answer.encoding, encoding)
  elseif method == "textDocument/codeAction" or method == "codeAction/resolve" then
    local list = method == "codeAction/resolve" and { result } or result or {}
    for _, action in ipairs(list) do
      if type(action) == "table" and type(action.edit) == "table" then
        convert_workspace_edit(action.edit, answer.encoding, encoding)
      end
    end
  elseif method == "textDocument/prepareCallHierarchy" then
    for _, item in ipairs(type(result) == "table" and result or {}) do
      convert_item(item, answer.encoding, encoding)
    end
  elseif method == "callHierarchy/incomingCalls" or method == "callHierarchy/outgoingCalls" then
    result = convert_calls(result, method, answer.encoding, encoding)
  elseif method ~= "textDocument/hover" and method ~= "textDocument/documentSymbol" then
    result = convert_locations(result, answer.encoding, encoding)
  end
  return { result = result == nil and vim.NIL or result, source = answer.client.name }
end

-- agentls/diagnostics ---------------------------------------------------------------------

local SEVERITY = { 1, 2, 3, 4 }

local function diagnostics(params, agentls)
  local encoding = agentls.offset_encoding or "utf-16"
  local own_namespace = vim.lsp.diagnostic.get_namespace(agentls.id)
  local items, sources = {}, {}
  for _, uri in ipairs(params.uris or {}) do
    local bufnr = vim.uri_to_bufnr(uri)
    if not vim.api.nvim_buf_is_loaded(bufnr) then
      return nil, response_error(REQUEST_FAILED, vim.uri_to_fname(uri) .. " is not open in Neovim")
    end
    local list = {}
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.namespace ~= own_namespace then
        local line = vim.api.nvim_buf_get_lines(bufnr, d.lnum, d.lnum + 1, false)[1] or ""
        local end_line = vim.api.nvim_buf_get_lines(bufnr, d.end_lnum or d.lnum, (d.end_lnum or d.lnum) + 1, false)[1]
          or ""
        local lsp = d.user_data and d.user_data.lsp or {}
        list[#list + 1] = {
          range = {
            start = { line = d.lnum, character = from_byte(line, d.col, encoding) },
            ["end"] = { line = d.end_lnum or d.lnum, character = from_byte(end_line, d.end_col or d.col, encoding) },
          },
          severity = SEVERITY[d.severity] or 1,
          message = d.message,
          source = d.source,
          code = lsp.code,
        }
        if d.source then
          sources[d.source] = true
        end
      end
    end
    items[#items + 1] = { uri = uri, diagnostics = list }
  end
  local names = vim.tbl_keys(sources)
  table.sort(names)
  return { result = items, source = #names > 0 and table.concat(names, ", ") or "Neovim" }
end

-- agentls/languages ------------------------------------------------------------------------

--- A buffer's filetype, detected from its name when `filetype on` is not set.
local function filetype_of(bufnr)
  local ft = vim.bo[bufnr].filetype
  if ft ~= "" or not vim.filetype or not vim.filetype.match then
    return ft
  end
  local ok, found = pcall(vim.filetype.match, { buf = bufnr }) -- 0.8+: returns it
  if ok and type(found) == "string" then
    return found
  end
  pcall(vim.filetype.match, vim.api.nvim_buf_get_name(bufnr), bufnr) -- 0.7: sets it
  return vim.bo[bufnr].filetype
end

--- The filetypes the user's other language servers serve (attached buffers' filetypes and
--- each client's configured `filetypes`): agentls starts no duplicate server for them.
local function languages(agentls)
  local seen = {}
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  for _, client in pairs(all) do
    if client.id ~= agentls.id and not stopped(client) then
      for _, ft in ipairs((client.config or {}).filetypes or {}) do
        seen[ft] = true
      end
      for bufnr in pairs(client.attached_buffers or {}) do
        local ft = vim.api.nvim_buf_is_valid(bufnr) and filetype_of(bufnr) or ""
        if ft ~= "" then
          seen[ft] = true
        end
      end
    end
  end
  local names = vim.tbl_keys(seen)
  table.sort(names)
  return { result = names, source = "Neovim" }
end

-- The handler -----------------------------------------------------------------------------

function M.handle(_, query, ctx)
  local agentls = vim.lsp.get_client_by_id(ctx.client_id)
  if type(query) ~= "table" or not agentls then
    return nil, response_error(REQUEST_FAILED, "malformed agentls/editorQuery")
  end
  local method, params = query.method, query.params or {}
  if method == "agentls/diagnostics" then
    return diagnostics(params, agentls)
  elseif method == "agentls/languages" then
    return languages(agentls)
  end
  if not CAPABILITY[method] then
    return nil, response_error(METHOD_NOT_FOUND, "unsupported method " .. tostring(method))
  end
  local encoding = agentls.offset_encoding or "utf-16"
  local bufnr, fresh = nil, false
  local document = params.textDocument or params.item -- call hierarchy: the item's file
  if document and document.uri then
    bufnr, fresh = ensure_buffer(document.uri)
  end
  local clients = other_clients(bufnr, agentls.id, method)
  if #clients == 0 and fresh then -- a buffer loaded just now: give its servers time to attach
    vim.wait(M.timeout_ms / 2, function()
      return #other_clients(bufnr, agentls.id, method) > 0
    end, 20)
    clients = other_clients(bufnr, agentls.id, method)
  end
  if #clients == 0 then
    return nil, response_error(REQUEST_FAILED, "no other language server answers " .. method .. " here")
  end
  local answers, errors = ask_clients(clients, method, params, encoding, bufnr)
  local first
  for index = 1, #clients do
    local answer = answers[index]
    if answer and not first then
      first = answer
    end
    if answer and not empty(answer.result) then
      return answer_for(method, answer, encoding)
    end
  end
  if first then
    return answer_for(method, first, encoding)
  end
  local why = #errors > 0 and table.concat(errors, "; ") or ("no answer within " .. M.timeout_ms .. " ms")
  return nil, response_error(REQUEST_FAILED, why)
end

--- Register the handler and announce the methods in the initialization options
--- (`setup({ editor_queries = false })` turns it off).
function M.setup(opts)
  if opts.editor_queries == false then
    return
  end
  opts.settings = vim.tbl_extend("force", { editorQueries = M.METHODS }, opts.settings or {})
  vim.lsp.handlers["agentls/editorQuery"] = M.handle
end

return M
