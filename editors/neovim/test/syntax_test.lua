-- Runs inside `nvim --headless --clean` with the plugin on 'runtimepath' (see
-- run.sh): the syntax group at each soft keyword the syntax file colours only
-- in its position, and at the same word where it is a name. Writes one
-- `check=value` line per check to $SR_REPORT, then quits.
local report_path = os.getenv('SR_REPORT')
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h')
vim.cmd('syntax enable')
vim.cmd('edit ' .. here .. '/syntax.sr')
local function at(line, col) return vim.fn.synIDattr(vim.fn.synID(line, col, 1), 'name') end
local lines = {}
for _, check in ipairs({
  { 'import', 1, 1 }, { 'from', 1, 17 },
  { 'exponential', 2, 24 }, { 'backoff', 2, 36 },
  { 'last', 4, 16 }, { 'messages', 4, 23 }, { 'tool', 4, 33 }, { 'results', 4, 38 },
  { 'on', 5, 1 }, { 'input', 5, 4 },
  { 'process_call', 9, 10 }, { 'process_variable', 10, 10 },
}) do
  table.insert(lines, check[1] .. '=' .. at(check[2], check[3]))
end
local out = assert(io.open(report_path, 'w'))
out:write(table.concat(lines, '\n') .. '\n')
out:close()
vim.cmd('qall!')
