-- Neovim 0.11+ native configuration (`:help lsp-config`): with this directory on
-- 'runtimepath', `vim.lsp.enable('streetrace')` starts `sr lsp` for `streetrace`
-- buffers. nvim-lspconfig 2.x reads the same `lsp/<name>.lua` files.
return {
  cmd = { 'sr', 'lsp' },
  filetypes = { 'streetrace' },
  root_markers = { '.git', '.streetrace' },
  settings = { streetrace = {} },
}
