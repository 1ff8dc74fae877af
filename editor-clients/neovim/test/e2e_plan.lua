-- Case "plan" (run by e2e.lua): a plan-mode run whose todo list shows in the session view,
-- which asks a multi-select question (answered "greet" and "callers", then "Done"), whose
-- plan opens in a scratch buffer and is approved with vim.ui.select (both answered here
-- asynchronously, as dressing.nvim or telescope would), and whose edit then follows in
-- review mode and is accepted.
local PICKS = {
  ["greet — the function"] = true,
  ["callers — every call site"] = true,
  ["Approve and let the agent edit (review)"] = true,
}

return function(h)
  local selects = {} -- every vim.ui.select: its prompt and items as shown
  vim.ui.select = function(items, opts, on_choice)
    local shown = {}
    for _, item in ipairs(items) do
      table.insert(shown, opts.format_item and opts.format_item(item) or tostring(item))
    end
    table.insert(selects, { prompt = opts.prompt, items = shown, kind = opts.kind })
    local pick, done = nil, nil
    for index, text in ipairs(shown) do
      if PICKS[text] and pick == nil then
        pick = items[index]
      elseif text == "Done" then
        done = items[index]
      end
    end
    pick = pick or done
    vim.defer_fn(function()
      on_choice(pick)
    end, 300)
  end
  local agentls = h.start({ mode = "review" })
  local log = require("agentls.log")
  local view = require("agentls.view")
  local plan = require("agentls.plan")
  agentls.run("Rename greet to welcome", { mode = "plan" })
  h.wait_for("session started", 45000, function()
    return log.last_session ~= nil
  end)
  local session = log.last_session
  h.wait_for("plan shown", 60000, function()
    return plan.last ~= nil and plan.last.session == session
  end)
  local plan_name = vim.api.nvim_buf_get_name(plan.last.bufnr)
  local plan_lines = vim.api.nvim_buf_get_lines(plan.last.bufnr, 0, -1, false)
  local plan_visible = vim.fn.bufwinid(plan.last.bufnr) ~= -1
  local plan_filetype = vim.bo[plan.last.bufnr].filetype
  -- the view while the plan waits: the todo list, as the agent left it
  local view_at_plan = view.lines(session)
  h.wait_for("run result", 60000, function()
    return log.sessions[session] and log.sessions[session].running == false
  end)
  local view_lines = view.lines(session)
  -- review mode in Neovim: the edit is staged; accept it
  local accepted = nil
  agentls.accept(session, nil, function(r)
    accepted = r
  end)
  h.wait_for("buffer shows the edit", 15000, function()
    return vim.deep_equal(h.buffer_lines(), h.RENAMED)
  end)
  h.settle(300)
  return {
    session = session,
    selects = selects,
    plan_name = plan_name,
    plan_lines = plan_lines,
    plan_visible = plan_visible,
    plan_filetype = plan_filetype,
    decision = plan.last.decision,
    view_at_plan = view_at_plan,
    view = view_lines,
    accepted = accepted,
    buffer = h.buffer_lines(),
    status = log.sessions[session].status,
    notifications = h.notifications,
  }
end
