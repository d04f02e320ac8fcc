-- Drives sr-lsp from headless Neovim (0.7 API): diagnostics, definition,
-- completion, formatting and rename on a fixture, the diagnostics of a file
-- never opened, and an import changed on disk by another program (0.7 watches
-- no files for the server: the server polls); writes what it saw to $SR_OUT,
-- one `key=value` per line, then quits.
local bin, root, out_path = os.getenv('SR_LSP'), os.getenv('SR_ROOT'), os.getenv('SR_OUT')
local results = {}
local function log(key, value) table.insert(results, key .. '=' .. tostring(value)) end
local function finish()
  local file = io.open(out_path, 'w')
  file:write(table.concat(results, '\n') .. '\n')
  file:close()
  vim.cmd('qa!')
end

local function session()
  local published = {} -- by URI, the last diagnostics the server pushed
  local client_id = vim.lsp.start_client({
    cmd = { bin },
    root_dir = root,
    init_options = { streetrace = { debounceMs = 0 } },
    handlers = {
      ['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
        published[result.uri] = result
        return vim.lsp.handlers['textDocument/publishDiagnostics'](err, result, ctx, config)
      end,
    },
  })
  vim.cmd('edit ' .. root .. '/main.sr')
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, client_id)

  local main_uri = vim.uri_from_bufnr(buf)
  local ok = vim.wait(15000, function() return published[main_uri] and #published[main_uri].diagnostics > 0 end, 20)
  if not ok then error('no diagnostics') end
  local codes = {}
  for _, d in ipairs(published[main_uri].diagnostics) do table.insert(codes, d.code .. '@' .. d.range.start.line) end
  log('diagnostics', table.concat(codes, ','))
  log('vim_diagnostics', #vim.diagnostic.get(buf))

  local client = vim.lsp.get_client_by_id(client_id)
  local uri = vim.uri_from_bufnr(buf)
  local function at(line, character) return { textDocument = { uri = uri }, position = { line = line, character = character } } end

  local definition = client.request_sync('textDocument/definition', at(2, 17), 5000, buf)
  local target = definition.result[1]
  log('definition', target.range.start.line .. ':' .. target.range.start.character)

  local completion = client.request_sync('textDocument/completion', at(5, 19), 5000, buf)
  local labels = {}
  local items = completion.result.items or completion.result
  for _, item in ipairs(items) do table.insert(labels, item.label) end
  log('completion', table.concat(labels, ','))

  local formatting = client.request_sync('textDocument/formatting',
    { textDocument = { uri = uri }, options = { tabSize = 4, insertSpaces = true } }, 5000, buf)
  vim.lsp.util.apply_text_edits(formatting.result, buf, client.offset_encoding)
  log('formatted', vim.api.nvim_buf_get_lines(buf, 6, 7, false)[1])

  local params = at(2, 17)
  params.newName = 'welcome'
  local rename = client.request_sync('textDocument/rename', params, 5000, buf)
  vim.lsp.util.apply_workspace_edit(rename.result, client.offset_encoding)
  log('renamed_0', vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])
  log('renamed_2', vim.api.nvim_buf_get_lines(buf, 2, 3, false)[1])

  -- The edits reached the server: a definition at the new name still resolves.
  local again = client.request_sync('textDocument/definition', at(2, 17), 5000, buf)
  log('definition_after', again.result and again.result[1].range.start.line or 'none')

  -- A file never opened: its diagnostics are pushed too.
  local closed = vim.uri_to_bufnr(vim.uri_from_fname(root .. '/broken.sr'))
  vim.wait(10000, function() return #vim.diagnostic.get(closed) > 0 end, 20)
  log('closed_file', #vim.diagnostic.get(closed))

  -- Another program changes a file that an open one imports.
  vim.cmd('edit ' .. root .. '/uses.sr')
  local uses = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(uses, client_id)
  local uses_uri = vim.uri_from_bufnr(uses)
  vim.wait(10000, function() return published[uses_uri] ~= nil end, 20)
  log('uses_before', #published[uses_uri].diagnostics)
  local lib = io.open(root .. '/lib.sr', 'w')
  lib:write('prompt q: """x"""\n')
  lib:close()
  vim.wait(10000, function() return #vim.diagnostic.get(uses) > 0 end, 20)
  local after = vim.diagnostic.get(uses)[1]
  log('uses_after_disk_change', after and after.code .. ' ' .. after.message:match('[^\n]*') or 'none')
end

-- Whatever happens, report and quit: a headless Neovim left open would hang the test.
local ok, err = pcall(session)
if not ok then log('error', err) end
finish()
