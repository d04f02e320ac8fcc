-- Neovim 0.11+ native configuration (`:help lsp-config`): with this directory on
-- 'runtimepath', `vim.lsp.enable('streetrace')` starts `sr lsp` for `streetrace`
-- buffers. nvim-lspconfig 2.x reads the same `lsp/<name>.lua` files.
--
-- Loading the plugin's module registers the handlers of the code lenses'
-- commands (`streetrace.run`, `debug`, `previewPrompt`, `showGraph`), so the
-- lenses work without `require('streetrace').setup()`; `:checkhealth streetrace`
-- recognises this client by its name, `streetrace`. Neovim 0.11 pulls
-- diagnostics but takes no refresh request, so the server pushes them to it.
local streetrace = require('streetrace')

return {
  cmd = { streetrace.config.sr, 'lsp' },
  filetypes = { 'streetrace' },
  root_markers = { '.git', '.streetrace' },
  settings = { streetrace = {} },
  on_attach = function(client, bufnr)
    -- Lenses are drawn only when asked for: refresh them as the buffer changes.
    if client.supports_method('textDocument/codeLens') then
      vim.lsp.codelens.refresh({ bufnr = bufnr })
      vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
        buffer = bufnr,
        group = vim.api.nvim_create_augroup('streetrace_lenses_' .. bufnr, { clear = true }),
        callback = function() vim.lsp.codelens.refresh({ bufnr = bufnr }) end,
      })
    end
  end,
}
