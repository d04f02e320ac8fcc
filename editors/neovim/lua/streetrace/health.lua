-- `:checkhealth streetrace`: the `sr` binary, the language server of this
-- buffer, and nvim-dap. Works with the `vim.health` API (0.10+) and the older
-- `health` module (0.7-0.9).
local M = {}

local health = vim.health or require('health')
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local error = health.error or health.report_error
local info = health.info or health.report_info

function M.check()
  local config = require('streetrace').config
  start('streetrace: binary')
  local sr = config.sr
  if vim.fn.executable(sr) == 1 then
    local version = vim.fn.systemlist({ sr, '--version' })[1] or ''
    if vim.v.shell_error == 0 then
      ok(('`%s` runs: %s'):format(vim.fn.exepath(sr), version))
    else
      error(('`%s --version` failed (exit %d): %s'):format(sr, vim.v.shell_error, version))
    end
  else
    error(('`%s` is not executable'):format(sr), {
      'install the StreetRace toolchain (pip install streetrace-rs, or the release tarball)',
      "or set the path: require('streetrace').setup({ sr = '/path/to/sr' })",
    })
  end

  start('streetrace: language server')
  -- `sr-lsp` from `setup()`, `streetrace` from the native config (lsp/streetrace.lua).
  local clients = vim.tbl_filter(function(client) return client.name == 'sr-lsp' or client.name == 'streetrace' end,
    (vim.lsp.get_clients or vim.lsp.get_active_clients)())
  if #clients == 0 then
    warn('no StreetRace language server client (`sr-lsp` or `streetrace`) is running (open a .sr file to start one)')
  end
  for _, client in ipairs(clients) do
    local buffers = vim.tbl_count(client.attached_buffers or {})
    ok(('client %d: `%s`, root %s, %d buffer(s)'):format(
      client.id, table.concat(client.config.cmd, ' '), client.config.root_dir or '?', buffers))
  end

  start('streetrace: debugger')
  local has_dap, dap = pcall(require, 'dap')
  if not has_dap then
    info('nvim-dap is not installed: debugging needs https://github.com/mfussenegger/nvim-dap')
  elseif dap.adapters.streetrace then
    ok('nvim-dap has the `streetrace` adapter (`sr dap`)')
  else
    warn("nvim-dap is installed but has no `streetrace` adapter: call require('streetrace').setup() after nvim-dap loads")
  end
end

return M
