-- Neovim 0.11+ native configuration (`:help lsp-config`): with this directory on
-- 'runtimepath', `vim.lsp.enable('streetrace')` starts `sr lsp` for `streetrace`
-- buffers. nvim-lspconfig 2.x reads the same `lsp/<name>.lua` files.
--
-- Loading the plugin's module registers the handlers of the code lenses'
-- commands (`streetrace.run`, `debug`, `previewPrompt`, `showGraph`,
-- `showReferences`), so the
-- lenses work without `require('streetrace').setup()`; `:checkhealth streetrace`
-- recognises this client by its name, `streetrace`. Neovim 0.11 pulls
-- diagnostics but takes no refresh request, so the server pushes them to it.
local streetrace = require('streetrace')

-- Buffers with a lens request in flight.
local asking = {}

-- Asks for a buffer's lenses. The server answers ContentModified when an edit
-- reaches it while it computes them (entering a buffer during an edit); that
-- answer is asked for again instead of being logged as an error, as
-- `vim.lsp.codelens.refresh` would.
local function refresh_lenses(client, bufnr)
  if asking[bufnr] or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  asking[bufnr] = true
  local params = { textDocument = vim.lsp.util.make_text_document_params(bufnr) }
  client:request('textDocument/codeLens', params, function(err, result, ctx)
    asking[bufnr] = nil
    if err and err.code == vim.lsp.protocol.ErrorCodes.ContentModified then
      vim.defer_fn(function() refresh_lenses(client, bufnr) end, 100)
    else
      vim.lsp.codelens.on_codelens(err, result, ctx)
    end
  end, bufnr)
end

return {
  cmd = { streetrace.config.sr, 'lsp' },
  filetypes = { 'streetrace' },
  root_markers = { '.git', '.streetrace' },
  settings = { streetrace = {} },
  on_attach = function(client, bufnr)
    -- Lenses are drawn only when asked for: refresh them as the buffer changes.
    if client.supports_method('textDocument/codeLens') then
      refresh_lenses(client, bufnr)
      vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
        buffer = bufnr,
        group = vim.api.nvim_create_augroup('streetrace_lenses_' .. bufnr, { clear = true }),
        callback = function() refresh_lenses(client, bufnr) end,
      })
    end
  end,
}
