-- The :Agentls* commands, also for users who only call vim.lsp.enable('agentls') (0.11+)
-- and never require("agentls").setup(). Set vim.g.agentls_no_commands to skip them.
if vim.g.loaded_agentls or vim.fn.has("nvim-0.7") ~= 1 then
  return
end
vim.g.loaded_agentls = true
if not vim.g.agentls_no_commands then
  require("agentls.commands").create_user_commands()
end
