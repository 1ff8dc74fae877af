-- The agent's plan (`agentls/reviewPlan`): a scratch buffer `agentls://plan/<session>`
-- (Markdown) in a split, then `vim.ui.select` of "Approve and let the agent edit (review)",
-- "Approve with auto-accepted edits" and "Keep planning" (then `vim.ui.input` for the
-- feedback the agent gets). The buffer stays until closed with q.
local compat = require("agentls.compat")

local M = {}

M.CHOICES = {
  { id = "review", label = "Approve and let the agent edit (review)" },
  { id = "auto", label = "Approve with auto-accepted edits" },
  { id = "keep_planning", label = "Keep planning" },
}
M.last = nil -- {session, bufnr, decision} of the last plan shown (for tests and statuslines)

local function plan_buffer(session, plan)
  local name = "agentls://plan/" .. session
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 or not vim.api.nvim_buf_is_valid(bufnr) then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
    vim.bo[bufnr].buftype = "nofile"
    vim.bo[bufnr].bufhidden = "hide"
    vim.bo[bufnr].swapfile = false
    vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = bufnr, nowait = true, silent = true })
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(plan, "\n", { plain = true }))
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  vim.bo[bufnr].filetype = "markdown"
  return bufnr
end

local function show(bufnr)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      return win
    end
  end
  local current = vim.api.nvim_get_current_win()
  vim.cmd("topleft split")
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, bufnr)
  vim.wo[win].wrap = true
  vim.api.nvim_set_current_win(current)
  return win
end

local function choices_of(params)
  local known = {}
  for _, choice in ipairs(M.CHOICES) do
    known[choice.id] = true
  end
  local found = {}
  for _, choice in ipairs(params.choices or {}) do
    if type(choice) == "table" and known[choice.id] and type(choice.label) == "string" then
      table.insert(found, choice)
    end
  end
  return #found > 0 and found or M.CHOICES
end

--- `agentls/reviewPlan` → {decision, feedback?}, or null when the user chose nothing.
function M.review(params)
  params = compat.denil(params) or {}
  local session = tostring(params.session_id or "plan")
  local bufnr = plan_buffer(session, tostring(params.plan or ""))
  show(bufnr)
  M.last = { session = session, bufnr = bufnr }
  local questions = require("agentls.questions")
  local choice = questions.select(choices_of(params), {
    prompt = "agentls: the agent's plan (shown above) — approve it?",
    format_item = function(item)
      return item.label
    end,
    kind = "agentls.plan",
  })
  if choice == nil then
    return vim.NIL
  end
  M.last.decision = choice.id
  if choice.id ~= "keep_planning" then
    return { decision = choice.id }
  end
  local feedback = questions.input("What should change in the plan? ")
  return { decision = "keep_planning", feedback = vim.trim(feedback or "") }
end

return M
