-- Runs inside `nvim --headless --clean` with the plugin on 'runtimepath' (see
-- run.sh): filetype, syntax, indentation, nvim-dap registration, and the
-- language server attached with diagnostics, go-to-definition, code lenses,
-- omni completion, :checkhealth and an import changed on disk. Writes one `check=value` line per check to $SR_REPORT, then
-- quits.
local sr, project, report_path = os.getenv('SR_BIN'), os.getenv('SR_PROJECT'), os.getenv('SR_REPORT')
local results = {}
local function report(check, value) table.insert(results, check .. '=' .. tostring(value)) end

local function syntax_at(line, col) return vim.fn.synIDattr(vim.fn.synID(line, col, 1), 'name') end

local function clients(bufnr) return vim.tbl_values(vim.lsp.buf_get_clients(bufnr)) end

local function checks()
  local launched -- what the Debug lens asks nvim-dap to run
  local asked -- what :StreetraceAnswer asked the debug session
  local notified = {}
  local notify = vim.notify
  vim.notify = function(message, ...) table.insert(notified, message) return notify(message, ...) end
  local requests = {} -- what :StreetraceRunLive and :StreetraceForks asked
  local forks = { { id = 1, label = 'the original run', current = false },
    { id = 2, parent = 1, label = '$v edited at main.sr:4 (main)', current = true } }
  local session = {
    stopped_thread_id = 3,
    request = function(_, command, arguments, callback)
      if command == 'streetraceAnswer' then
        asked = command .. ' ' .. arguments.text
        callback(nil, { threadId = 1, question = 'ship it?' })
      elseif command == 'streetraceForks' then
        table.insert(requests, command)
        callback(nil, { forks = forks, current = 2 })
      else
        table.insert(requests, command .. ' ' .. vim.inspect(arguments, { newline = '' }))
        callback(nil, { threadId = arguments.threadId })
      end
    end,
  }
  package.loaded.dap = { -- stands in for nvim-dap
    adapters = {}, configurations = {}, defaults = { streetrace = {} },
    run = function(configuration) launched = configuration end,
    session = function() return session end,
    listeners = { after = setmetatable({}, { __index = function(t, k) t[k] = {} return t[k] end }) },
  }
  require('streetrace').setup({ sr = sr, settings = { debounceMs = 0 } })
  local dap = package.loaded.dap
  report('dap_adapter', dap.adapters.streetrace.command == sr and table.concat(dap.adapters.streetrace.args, ' '))
  report('dap_auto_continue', dap.defaults.streetrace.auto_continue_if_many_stopped)
  report('dap_configuration', dap.configurations.streetrace[1].request .. ' ' .. dap.configurations.streetrace[1].program)
  dap.listeners.after.event_streetraceQuestion.streetrace(session, { threadId = 2, question = 'ship it?' })
  vim.cmd('StreetraceAnswer yes, ship it')
  report('dap_answer', asked)
  report('dap_answer_notes', table.concat(notified, ' | '))
  notified = {}
  vim.cmd('StreetraceRunLive')
  local ui_select = vim.ui.select
  local offered
  vim.ui.select = function(items, options, on_choice)
    offered = table.concat(vim.tbl_map(options.format_item, items), ' | ')
    on_choice(items[1])
  end
  vim.cmd('StreetraceForks')
  vim.ui.select = ui_select
  report('dap_forks_offered', offered)
  report('dap_fork_requests', table.concat(requests, ' | '))
  report('dap_fork_notes', table.concat(notified, ' | '))
  vim.notify = notify

  vim.cmd('edit ' .. project .. '/main.sr')
  local buf = vim.api.nvim_get_current_buf()
  report('filetype', vim.bo.filetype)
  report('syntax_declaration', syntax_at(1, 1))
  report('syntax_interpolation', syntax_at(1, 26))
  report('syntax_run', syntax_at(6, 10))
  report('syntax_property', syntax_at(3, 5))

  vim.wait(10000, function() return #clients(buf) == 1 end, 20)
  local client = clients(buf)[1]
  report('client', client and client.name .. ' ' .. (client.config.root_dir == project and 'project-root' or client.config.root_dir))

  vim.wait(10000, function() return #vim.diagnostic.get(buf, { lnum = 3 }) > 0 end, 20)
  local diagnostics = vim.tbl_map(function(d) return d.lnum .. ':' .. d.code end, vim.diagnostic.get(buf))
  table.sort(diagnostics)
  report('diagnostics', table.concat(diagnostics, ','))
  local tool = vim.diagnostic.get(buf, { lnum = 3 })[1]
  report('diagnostic_message', tool and tool.message)

  vim.api.nvim_win_set_cursor(0, { 3, 17 }) -- `instruction greet`
  vim.lsp.buf.definition()
  vim.wait(5000, function() return vim.api.nvim_win_get_cursor(0)[1] == 1 end, 20)
  local cursor = vim.api.nvim_win_get_cursor(0)
  report('definition', cursor[1] .. ':' .. cursor[2])

  -- Code lenses: Preview on the prompt, which opens the rendered prompt in a
  -- split; no Run or Debug, since `sr run main.sr` would refuse its errors.
  -- A references count comes without its command until resolved.
  local function lenses_of(bufnr)
    local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeLens',
      { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }, 5000) or {}
    local found = (responses[client.id] or {}).result or {}
    for i, lens in ipairs(found) do
      if not lens.command then
        local resolved = vim.lsp.buf_request_sync(bufnr, 'codeLens/resolve', lens, 5000) or {}
        found[i] = (resolved[client.id] or {}).result or lens
      end
    end
    local titles = vim.tbl_map(function(l) return l.range.start.line .. ':' .. l.command.title end, found)
    table.sort(titles)
    return found, table.concat(titles, ',')
  end
  local lenses, titles = lenses_of(buf)
  report('lenses', titles)
  local preview = vim.tbl_filter(function(l) return l.command.title == 'Preview' end, lenses)[1]
  if preview then
    vim.lsp.commands[preview.command.command](preview.command, { client_id = client.id, bufnr = buf })
    vim.wait(5000, function() return vim.api.nvim_buf_get_name(0):find('Prompt: greet', 1, true) ~= nil end, 20)
    report('lens_preview', vim.api.nvim_buf_get_name(0):match('Prompt: %w+') .. ' | '
      .. table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '|'))
    vim.cmd('bwipeout')
    vim.cmd('buffer ' .. buf)
  end
  -- The references count of `greet` lists its one use in the quickfix list.
  local count = vim.tbl_filter(function(l) return l.command.title == '1 reference' end, lenses)[1]
  if count then
    vim.lsp.commands[count.command.command](count.command, { client_id = client.id, bufnr = buf })
    local uses = vim.tbl_map(function(q) return q.lnum .. ':' .. q.col end, vim.fn.getqflist())
    report('lens_references', table.concat(uses, ','))
    vim.cmd('cclose')
    vim.cmd('buffer ' .. buf)
  end
  -- Run and Debug on a file `sr run` starts.
  vim.cmd('edit ' .. project .. '/runs.sr')
  local runs = vim.api.nvim_get_current_buf()
  vim.wait(10000, function() return #clients(runs) > 0 end, 20)
  vim.wait(10000, function()
    lenses, titles = lenses_of(runs)
    return titles ~= ''
  end, 100)
  report('runs_lenses', titles)
  -- Debug: the server's launch configuration goes to nvim-dap.
  local debug = vim.tbl_filter(function(l) return l.command.title == 'Debug' end, lenses)[1]
  if debug then
    vim.lsp.commands[debug.command.command](debug.command, { client_id = client.id, bufnr = runs })
    vim.wait(5000, function() return launched ~= nil end, 20)
    report('lens_debug', launched and launched.type .. ' ' .. launched.request .. ' '
      .. vim.fn.fnamemodify(launched.program, ':t'))
  end
  -- Run: `sr run` in a terminal split, with the arguments and directory the
  -- server gives; the flow logs a line and ends.
  local run = vim.tbl_filter(function(l) return l.command.title == '▶ Run' end, lenses)[1]
  if run then
    vim.lsp.commands[run.command.command](run.command, { client_id = client.id, bufnr = runs })
    vim.wait(5000, function() return vim.bo.buftype == 'terminal' end, 20)
    local term = vim.api.nvim_get_current_buf()
    local ok, job = pcall(vim.api.nvim_buf_get_var, term, 'terminal_job_id')
    local code = ok and vim.fn.jobwait({ job }, 20000)[1] or 'no job'
    local output = ''
    vim.wait(5000, function()
      -- Long lines wrap at the window's width: join them back.
      output = table.concat(vim.api.nvim_buf_get_lines(term, 0, -1, false), '')
      return output:find('ran from a lens', 1, true) ~= nil
    end, 20)
    report('lens_run', vim.bo[term].buftype .. ' exit ' .. tostring(code) .. ' '
      .. tostring(output:find('log: ran from a lens', 1, true) ~= nil))
    vim.cmd('bwipeout!')
    vim.cmd('buffer ' .. buf)
  end
  -- Try on a prompt, served from a recording: without inputs, the inputs file
  -- opens with a line for each; filled in and saved, Try shows the rendered
  -- prompt, the reply and the tokens; :StreetraceSaveCase appends that run
  -- to an sr eval dataset.
  require('streetrace').config.try_args = { '--replay', project .. '/try.cassette.jsonl' }
  vim.cmd('edit ' .. project .. '/try.sr')
  local tries = vim.api.nvim_get_current_buf()
  vim.wait(10000, function() return #clients(tries) > 0 end, 20)
  local try_lens
  vim.wait(10000, function()
    lenses = lenses_of(tries)
    try_lens = vim.tbl_filter(function(l) return l.command.title == 'Try' end, lenses)[1]
    return try_lens ~= nil
  end, 100)
  report('try_lens', try_lens and try_lens.range.start.line .. ':' .. try_lens.command.arguments[1].item)
  if try_lens then
    local function current_name() return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':t') end
    vim.lsp.commands[try_lens.command.command](try_lens.command, { client_id = client.id, bufnr = tries })
    vim.wait(20000, function() return current_name() == 'greet.inputs.yaml' end, 20)
    report('try_inputs', current_name() .. ' | ' .. table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '|'))
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'name: Ann' })
    vim.cmd('write')
    vim.cmd('bwipeout')
    vim.cmd('buffer ' .. tries)
    vim.lsp.commands[try_lens.command.command](try_lens.command, { client_id = client.id, bufnr = tries })
    vim.wait(20000, function() return current_name() == 'Try: greet' end, 20)
    report('try_result', table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '|'))
    vim.cmd('bwipeout')
    vim.cmd('buffer ' .. tries)
    local saved_note
    vim.notify = function(message) saved_note = message end
    vim.cmd('StreetraceSaveCase ' .. project .. '/cases.yaml')
    vim.wait(20000, function() return saved_note ~= nil end, 20)
    vim.notify = notify
    local saved = tostring(saved_note):gsub(vim.pesc(project), 'PROJECT')
    report('try_saved', saved .. ' | ' .. table.concat(vim.fn.readfile(project .. '/cases.yaml'), '|'))
    vim.cmd('buffer ' .. buf)
  end
  -- The graph (a command, no lens): its Mermaid text in a split.
  local graph = { command = 'streetrace.showGraph', arguments = { vim.uri_from_bufnr(buf) } }
  vim.lsp.commands[graph.command](graph, { client_id = client.id, bufnr = buf })
  vim.wait(5000, function() return vim.api.nvim_buf_get_name(0):find('StreetRace graph', 1, true) ~= nil end, 20)
  local graph_lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  report('graph', vim.bo.filetype .. ' ' .. tostring(graph_lines[1]) .. ' '
    .. tostring(#vim.tbl_filter(function(l) return l:find('-->', 1, true) ~= nil end, graph_lines) > 0))
  if vim.api.nvim_get_current_buf() ~= buf then
    vim.cmd('bwipeout')
    vim.cmd('buffer ' .. buf)
  end

  report('omnifunc', vim.bo[buf].omnifunc)
  -- Omni completion after `    instruction gr`: the server offers `greet`. The
  -- omnifunc hands its matches to complete() only in Insert mode, which a headless
  -- script cannot hold while waiting: stand in for mode() and capture the matches.
  local items = {}
  -- (0.7 asks vim.fn.mode(), 0.11 vim.api.nvim_get_mode().)
  local complete, mode, get_mode = vim.fn.complete, vim.fn.mode, vim.api.nvim_get_mode
  vim.fn.mode = function() return 'i' end
  vim.api.nvim_get_mode = function() return { mode = 'i', blocking = false } end
  vim.fn.complete = function(_, matches)
    items = vim.tbl_map(function(item) return type(item) == 'table' and item.word or item end, matches)
  end
  vim.api.nvim_buf_set_lines(buf, 2, 3, false, { '    instruction gr' })
  vim.api.nvim_win_set_cursor(0, { 3, 17 })
  local omnifunc = vim.api.nvim_buf_get_option(buf, 'omnifunc') == 'v:lua.vim.lsp.omnifunc' and vim.lsp.omnifunc
  local start = omnifunc(1, '')
  if start >= 0 then omnifunc(0, 'gr') end
  vim.wait(5000, function() return #items > 0 end, 20)
  vim.fn.complete, vim.fn.mode, vim.api.nvim_get_mode = complete, mode, get_mode
  report('omnifunc_items', vim.tbl_contains(items, 'greet'))
  vim.api.nvim_buf_set_lines(buf, 2, 3, false, { '    instruction greet' })

  vim.cmd('checkhealth streetrace')
  local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  report('health_binary', health:find('`' .. sr .. '` runs: sr ', 1, true) ~= nil)
  report('health_client', health:find('client ' .. client.id .. ': `' .. sr .. ' lsp`, root ' .. project, 1, true) ~= nil)
  report('health_errors', select(2, health:gsub('ERROR', '')))
  vim.cmd('bwipeout')
  vim.cmd('buffer ' .. buf)

  -- A second file of the same project shares the client.
  vim.cmd('edit ' .. project .. '/other.sr')
  vim.wait(5000, function() return #clients(0) == 1 end, 20)
  report('same_client', #clients(0) == 1 and clients(0)[1].id == client.id)

  -- Another program changes a file that an open one imports (Neovim 0.7 watches
  -- no files for the server, which polls the disk); then a save of the importer.
  vim.cmd('edit ' .. project .. '/uses.sr')
  local uses = vim.api.nvim_get_current_buf()
  vim.wait(5000, function() return #clients(uses) == 1 end, 20)
  local lib = io.open(project .. '/lib.sr', 'w')
  lib:write('prompt q: """x"""\n')
  lib:close()
  vim.wait(10000, function() return #vim.diagnostic.get(uses) > 0 end, 20)
  local missing = vim.diagnostic.get(uses)[1]
  report('import_changed_on_disk', missing and missing.code .. ' ' .. missing.message:match('[^\n]*'))
  lib = io.open(project .. '/lib.sr', 'w')
  lib:write('agent helper:\n    instruction q\nprompt q: """x"""\n')
  lib:close()
  vim.cmd('write')
  vim.wait(10000, function() return #vim.diagnostic.get(uses) == 0 end, 20)
  report('import_restored_and_saved', #vim.diagnostic.get(uses))

  -- lib.sr moved to a subdirectory: uses.sr's import follows it.
  vim.cmd('edit ' .. project .. '/lib.sr')
  vim.wait(5000, function() return #clients(0) == 1 end, 20)
  vim.cmd('StreetraceRenameFile ' .. project .. '/agents/lib.sr')
  report('rename_file', vim.api.nvim_buf_get_lines(uses, 0, 1, false)[1] .. ' '
    .. tostring(vim.loop.fs_stat(project .. '/agents/lib.sr') ~= nil) .. ' '
    .. tostring(vim.loop.fs_stat(project .. '/lib.sr') ~= nil))

  vim.cmd('enew')
  vim.bo.filetype = 'streetrace'
  vim.api.nvim_buf_set_lines(0, 0, -1, false,
    { 'flow main:', 'for x in $xs do', 'if x:', 'log x', 'end', 'match $y', 'when "a" -> abort', 'end', 'return 1' })
  vim.cmd('normal! gg=G')
  report('indent', table.concat(vim.tbl_map(function(l) return (l:gsub('    ', '>')) end,
    vim.api.nvim_buf_get_lines(0, 0, -1, false)), '|'))
end

-- Whatever happens, report and quit: a headless Neovim left open would hang.
local ok, err = pcall(checks)
if not ok then report('error', err) end
local file = io.open(report_path, 'w')
file:write(table.concat(results, '\n') .. '\n')
file:close()
vim.cmd('qa!')
