-- Case "hunks" (run by e2e.lua): a run changes hello.py in two places (two hunks, lines 1
-- and 5); in :AgentlsDiff the hunk under the cursor on line 5 is rejected with a reason
-- and `ha` on line 1 accepts the other; then the session continues, and the model's next
-- request carries the reason (checked by the Python test from the recorded requests).
return function(h)
  local log = require("agentls.log")
  h.start({ mode = "review" })
  vim.cmd("AgentlsRun Rename greet")
  h.wait_for("session started", 45000, function()
    return log.last_session ~= nil
  end)
  local session = log.last_session
  h.wait_for("run result", 60000, function()
    return log.sessions[session] and log.sessions[session].running == false
  end)
  -- the side buffer lists each staged file with its check before review
  local view = require("agentls.view")
  view.open(session, false)
  h.settle(200)
  local side_checks = {}
  for _, line in ipairs(view.lines(session)) do
    if line:find("hello.py: ", 1, true) then
      table.insert(side_checks, line)
    end
  end
  local diff = require("agentls.diff")
  vim.cmd("AgentlsDiff")
  h.wait_for("diff open", 10000, function()
    return diff.state ~= nil and diff.state.scratch ~= nil and vim.api.nvim_get_current_buf() == diff.state.scratch
  end)
  local diff_check = h.notified("checks: ")
  local winbar = vim.fn.exists("+winbar") == 1 and vim.wo.winbar or vim.NIL
  local hunks_before = #diff.state.hunks
  vim.api.nvim_win_set_cursor(0, { 5, 0 })
  local under_cursor = diff.hunk_at(5)
  -- `hr` asks why with vim.ui.input: answered here as a user (or dressing.nvim) would
  vim.ui.input = function(opts, on_confirm)
    vim.defer_fn(function()
      on_confirm("keep the call, it is public")
    end, 10)
  end
  vim.api.nvim_feedkeys("hr", "x", false)
  h.wait_for("one hunk left", 10000, function()
    return diff.state ~= nil and diff.state.hunks ~= nil and #diff.state.hunks == 1
  end)
  h.wait_for("diff shown again", 10000, function()
    return diff.state.scratch ~= nil and vim.api.nvim_buf_is_valid(diff.state.scratch)
      and vim.api.nvim_get_current_buf() == diff.state.scratch
  end)
  local staged_after_reject = h.buffer_lines()
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.api.nvim_feedkeys("ha", "x", false)
  h.wait_for("review closed", 10000, function()
    return diff.state == nil
  end)
  h.wait_for("hello.py saved", 10000, function()
    return vim.fn.readfile(h.workspace .. "/hello.py")[1] == "def welcome(name):"
  end)
  h.settle(300)
  require("agentls.commands").run("go on", { session = session })
  h.wait_for("second run result", 60000, function()
    return log.sessions[session] and log.sessions[session].running == false
      and (log.sessions[session].text or ""):find("Understood", 1, true) ~= nil
  end)
  -- :AgentlsRewind without a turn: the turns, picked with vim.ui.select (turn 1 here)
  local shown = nil
  vim.ui.select = function(items, opts, on_choice)
    shown = {}
    for _, item in ipairs(items) do
      table.insert(shown, opts.format_item(item))
    end
    vim.defer_fn(function()
      on_choice(items[1])
    end, 10)
  end
  -- the second run's text can arrive before its end: wait until both turns are listed
  local rewind = require("agentls.rewind")
  local listed = 0
  h.wait_for("two turns listed", 20000, function()
    rewind.turns(session, function(turns)
      listed = #turns
    end)
    vim.wait(200, function()
      return listed == 2
    end, 20)
    return listed == 2
  end)
  vim.cmd("AgentlsRewind")
  h.wait_for("rewound", 10000, function()
    return h.notified("is back at the end of turn 1")
  end)
  return {
    turns_shown = shown,
    side_checks = side_checks,
    diff_check = diff_check or vim.NIL,
    winbar = winbar,
    session = session,
    hunks_before = hunks_before,
    under_cursor = under_cursor and { index = under_cursor.index, where = under_cursor.where } or vim.NIL,
    staged_after_reject = staged_after_reject,
    disk = vim.fn.readfile(h.workspace .. "/hello.py"),
    modified = h.modified_buffers(),
    notifications = h.notifications,
  }
end
