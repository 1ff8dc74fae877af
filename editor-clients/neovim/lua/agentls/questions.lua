-- The agent's questions (`agentls/askQuestions`) with `vim.ui.select`, and its plans
-- (`agentls/reviewPlan`, see agentls.plan). Announced in the client capabilities
-- (`experimental.agentls.questions` / `.planReview`), so the server sends these instead
-- of plain message requests.
--
-- A question: one `vim.ui.select` of its options plus "Other…" (then `vim.ui.input` for
-- the user's own words). A multi-select question asks one choice at a time, with "Done"
-- once something is chosen. Works with the built-in `vim.ui` and with plugins that make
-- it asynchronous (dressing.nvim, telescope-ui-select): the handler waits for the answer.
local compat = require("agentls.compat")

local M = {}

M.DONE = "Done"
M.timeout_ms = 24 * 60 * 60 * 1000 -- a question waits for the user (the run can be cancelled)

--- Run `start(done)` (which calls `done(value)` once) and wait for the value, processing
--- events meanwhile so an asynchronous `vim.ui` can draw and take keys.
function M.await(start)
  local finished, value = false, nil
  start(function(result)
    finished, value = true, result
  end)
  vim.wait(M.timeout_ms, function()
    return finished
  end, 20)
  return value
end

local function select(items, opts)
  return M.await(function(done)
    vim.ui.select(items, opts, function(choice)
      done(choice)
    end)
  end)
end

local function input(prompt)
  return M.await(function(done)
    vim.ui.input({ prompt = prompt }, function(text)
      done(text)
    end)
  end)
end

local function label_of(item)
  return type(item) == "table" and item.label or tostring(item)
end

local function describe(item)
  if type(item) ~= "table" then
    return tostring(item)
  end
  if item.description and item.description ~= "" then
    return ("%s — %s"):format(item.label, item.description)
  end
  return item.label
end

--- One question → {selected = {...}, other = string|vim.NIL}, or nil when dismissed.
function M.ask_one(question, position, other_label)
  local options = question.options or {}
  local multi = question.multi_select == true
  local chosen = {}
  local prompt = ("agentls asks (%s) — %s: %s"):format(position, question.header or "", question.question or "")
  while true do
    local items = {}
    for _, option in ipairs(options) do
      if not vim.tbl_contains(chosen, option.label) then
        table.insert(items, option)
      end
    end
    if multi and #chosen > 0 then
      table.insert(items, { label = M.DONE, done = true })
    end
    table.insert(items, { label = other_label, other = true })
    local shown = prompt
    if multi then
      shown = prompt .. (#chosen > 0 and (" (chosen: " .. table.concat(chosen, ", ") .. ")") or " (one at a time)")
    end
    local choice = select(items, { prompt = shown, format_item = describe, kind = "agentls.question" })
    if choice == nil then
      return #chosen > 0 and { selected = chosen, other = vim.NIL } or nil
    end
    if choice.other then
      local text = input(question.question .. " ")
      if text == nil or vim.trim(text) == "" then
        return #chosen > 0 and { selected = chosen, other = vim.NIL } or nil
      end
      return { selected = chosen, other = vim.trim(text) }
    end
    if choice.done then
      return { selected = chosen, other = vim.NIL }
    end
    table.insert(chosen, label_of(choice))
    if not multi or #chosen == #options then
      return { selected = chosen, other = vim.NIL }
    end
  end
end

--- `agentls/askQuestions`: every question in turn; null when the first was dismissed.
function M.ask(params)
  params = compat.denil(params) or {}
  local questions = params.questions or {}
  local other_label = params.other_label or "Other…"
  local answers = {}
  for index, question in ipairs(questions) do
    local answer = M.ask_one(question, ("%d/%d"):format(index, #questions), other_label)
    if answer == nil then
      break
    end
    table.insert(answers, answer)
  end
  if #answers == 0 then
    return vim.NIL
  end
  while #answers < #questions do
    table.insert(answers, { selected = {}, other = vim.NIL })
  end
  return { answers = answers }
end

local function handler(work)
  return function(err, params)
    if err then
      return vim.NIL
    end
    local ok, result = pcall(work, params)
    if not ok then
      compat.notify("agentls: " .. tostring(result), vim.log.levels.ERROR)
      return vim.NIL
    end
    return result
  end
end

--- Register the request handlers (`setup({ questions = false })` leaves them out; the
--- server then asks with plain message requests).
function M.setup(opts)
  if opts.questions == false then
    return
  end
  vim.lsp.handlers["agentls/askQuestions"] = handler(M.ask)
  vim.lsp.handlers["agentls/reviewPlan"] = handler(require("agentls.plan").review)
end

M.select = select
M.input = input

return M
