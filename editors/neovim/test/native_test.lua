-- Neovim 0.11+: the native configuration alone (lsp/streetrace.lua and
-- `vim.lsp.enable('streetrace')`), without `require('streetrace').setup()`:
-- diagnostics, the lenses' commands, :checkhealth, and an import edited and
-- saved in the editor reaching the open file that imports it (Neovim 0.11
-- pulls diagnostics but takes no refresh: the server must push). Writes one
-- `check=value` line per check to $SR_REPORT, then quits.
local sr, project, report_path = os.getenv('SR_BIN'), os.getenv('SR_PROJECT'), os.getenv('SR_REPORT')
local results = {}
local function report(check, value) table.insert(results, check .. '=' .. tostring(value)) end

local function codes(buf)
  local out = vim.tbl_map(function(d) return d.lnum .. ':' .. d.code end, vim.diagnostic.get(buf))
  table.sort(out)
  return table.concat(out, ',')
end

local function checks()
  vim.cmd('filetype on')
  vim.lsp.config('streetrace', { cmd = { sr, 'lsp' }, init_options = { streetrace = { debounceMs = 0 } } })
  vim.lsp.enable('streetrace')
  vim.cmd('edit ' .. project .. '/main.sr')
  local buf = vim.api.nvim_get_current_buf()
  vim.wait(10000, function() return #vim.lsp.get_clients({ bufnr = buf }) == 1 end, 20)
  local client = vim.lsp.get_clients({ bufnr = buf })[1]
  report('native_client', client and client.name)
  vim.wait(10000, function() return #vim.diagnostic.get(buf, { lnum = 3 }) > 0 end, 20)
  report('native_diagnostics', codes(buf))

  -- The lenses' commands are the plugin's, registered by the config.
  local lenses = {}
  vim.wait(10000, function()
    lenses = vim.lsp.codelens.get(buf)
    return #lenses > 0 and lenses[1].command ~= nil
  end, 20)
  local preview = vim.tbl_filter(function(l) return l.command and l.command.title == 'Preview' end, lenses)[1]
  report('native_lens_handler', preview ~= nil and vim.lsp.commands[preview.command.command] ~= nil)
  if preview then
    vim.lsp.commands[preview.command.command](preview.command, { client_id = client.id, bufnr = buf })
    vim.wait(5000, function() return vim.api.nvim_buf_get_name(0):find('Prompt: greet', 1, true) ~= nil end, 20)
    report('native_lens_preview', table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '|'))
    vim.cmd('bwipeout')
    vim.cmd('buffer ' .. buf)
  end

  -- Entering the buffer while edits reach the server: a lens request the
  -- edits overtake is asked again, not logged as an error.
  local log_path = vim.lsp.get_log_path()
  local function modified_logged()
    local log = io.open(log_path, 'r')
    if not log then return 0 end
    local text = log:read('*a')
    log:close()
    return select(2, text:gsub('Content modified', ''))
  end
  local logged_before = modified_logged()
  for i = 1, 20 do
    vim.api.nvim_buf_set_lines(buf, 6, 6, false, { '    log "edit ' .. i .. '"' })
    vim.api.nvim_exec_autocmds('BufEnter', { buffer = buf })
    vim.api.nvim_buf_set_lines(buf, 6, 7, false, {})
    vim.lsp.buf_request(buf, 'textDocument/documentSymbol', { textDocument = { uri = vim.uri_from_bufnr(buf) } }, function() end)
    vim.wait(50, function() return false end, 10)
  end
  vim.wait(3000, function() return false end, 50)
  report('native_lens_race_logged', modified_logged() - logged_before)
  local titles = vim.tbl_map(function(l) return l.command and l.command.title or '?' end, vim.lsp.codelens.get(buf))
  table.sort(titles)
  report('native_lens_after_edits', table.concat(titles, ','))

  vim.cmd('checkhealth streetrace')
  local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  report('native_health_client', health:find('client ' .. client.id .. ': `' .. sr .. ' lsp`', 1, true) ~= nil)
  report('native_health_warnings', select(2, health:gsub('WARNING no StreetRace', '')))
  vim.cmd('bwipeout')
  vim.cmd('buffer ' .. buf)

  -- uses.sr delegates to `helper`, which lib.sr defines; lib.sr drops it in
  -- the editor and is saved: uses.sr, not edited, shows the error.
  vim.cmd('edit ' .. project .. '/uses.sr')
  local uses = vim.api.nvim_get_current_buf()
  vim.wait(10000, function() return #vim.lsp.get_clients({ bufnr = uses }) == 1 end, 20)
  vim.wait(2000, function() return false end, 50)
  report('native_uses_before', #vim.diagnostic.get(uses))
  vim.cmd('edit ' .. project .. '/lib.sr')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'prompt q: """x"""' })
  vim.cmd('write')
  vim.wait(10000, function() return #vim.diagnostic.get(uses) > 0 end, 20)
  local missing = vim.diagnostic.get(uses)[1]
  report('native_import_edited_and_saved', missing and missing.code .. ' ' .. missing.message:match('[^\n]*'))
end

local ok, err = pcall(checks)
if not ok then report('error', err) end
local file = io.open(report_path, 'w')
file:write(table.concat(results, '\n') .. '\n')
file:close()
vim.cmd('qall!')
