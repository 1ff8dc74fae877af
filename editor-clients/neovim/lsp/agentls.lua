-- Neovim 0.11+: `vim.lsp.enable('agentls')` reads this file (no setup() call needed).
-- Override any field with vim.lsp.config('agentls', { cmd = {...}, settings = {...} }):
--   vim.lsp.config('agentls', {
--     cmd = { vim.fn.getcwd() .. '/.venv/bin/agentls', 'serve' },
--     settings = { agentls = { mode = 'review' } },
--   })
--   vim.lsp.enable('agentls')
local config = require("agentls.client").config({})
config.name = nil -- the file's name is the config's name
config.cmd = config.cmd or { "agentls", "serve" }
return config
