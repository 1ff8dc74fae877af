-- :AgentlsRewind [turn] — a session back to the end of one of its turns (agentls.rewind).
-- Without a turn: pick one with vim.ui.select from the session's turns (prompt and the
-- files each changed, from agentls.status's `history`). Later turns leave the history;
-- changes applied since are staged in reverse (review them with :AgentlsDiff).
local compat = require("agentls.compat")

local M = {}

--- The turns of `session` ({turn, prompt, files}) to `on_turns`.
function M.turns(session, on_turns)
  return require("agentls.commands").execute("agentls.status", vim.empty_dict(), function(result)
    result = compat.denil(result) or {}
    local turns = {}
    for _, s in ipairs(result.sessions or {}) do
      if s.id == session then
        turns = s.history or {}
      end
    end
    vim.schedule(function()
      on_turns(turns)
    end)
  end)
end

local function label(turn)
  local files = {}
  for _, f in ipairs(turn.files or {}) do
    table.insert(files, vim.fn.fnamemodify(f, ":t"))
  end
  local shown = #files > 0 and table.concat(files, ", ") or "no files"
  return ("%d. %s — %s"):format(turn.turn, turn.prompt, shown)
end

--- Rewind `session` to `turn`; `on_result` gets the server's answer.
function M.rewind(session, turn, on_result)
  return require("agentls.commands").execute("agentls.rewind", { session = session, turn = turn }, function(result)
    result = compat.denil(result) or {}
    local dropped = #(result.dropped or {})
    local reverted = #(result.reverted or {})
    compat.notify(
      ("agentls: session %s is back at the end of turn %d (%d later turn(s) dropped%s)"):format(
        session,
        turn,
        dropped,
        reverted > 0 and ("; %d file(s) staged in reverse — :AgentlsDiff"):format(reverted) or ""
      )
    )
    if on_result then
      vim.schedule(function()
        on_result(result)
      end)
    end
  end)
end

function M.command(opts)
  local session = require("agentls.log").last_session
  if not session then
    compat.notify("agentls: no session yet — start one with :AgentlsRun", vim.log.levels.WARN)
    return
  end
  local turn = tonumber(opts.args)
  if turn then
    M.rewind(session, turn)
    return
  end
  M.turns(session, function(turns)
    if #turns == 0 then
      compat.notify(("agentls: session %s has no turns yet"):format(session))
      return
    end
    vim.ui.select(turns, { prompt = "agentls: rewind to the end of turn", format_item = label }, function(choice)
      if choice then
        M.rewind(session, choice.turn)
      end
    end)
  end)
end

M.label = label

return M
