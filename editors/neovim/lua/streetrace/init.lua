-- StreetRace for Neovim: starts the language server (`sr lsp`) for every
-- `streetrace` buffer, one client per project root, and registers the
-- `sr dap` debug adapter with nvim-dap when it is installed.
local M = {}

local defaults = {
  -- The `sr` binary (debug adapter; language server unless `cmd` is set).
  sr = 'sr',
  -- The language server command; default `{ sr, 'lsp' }`.
  cmd = nil,
  -- Server settings (crates/sr-lsp/src/config.rs):
  -- { diagnostics = { mode = 'default' | 'upstream' }, debounceMs = 200, inlayHints = true, codeLens = true }
  settings = {},
  -- Files or directories marking a project root; else the file's directory.
  root_markers = { '.git', '.streetrace' },
  -- Extra `sr try` arguments for the Try lens, e.g. `{ '--replay', 'try.cassette.jsonl' }`.
  try_args = {},
  on_attach = nil,
  capabilities = nil,
}

M.config = vim.deepcopy(defaults)

-- Neovim 0.7 has no `vim.lsp.start`: clients by root directory.
local clients_by_root = {}

local function root_dir(bufnr)
  local dir = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':p:h')
  for _, marker in ipairs(M.config.root_markers) do
    local found = vim.fn.finddir(marker, dir .. ';')
    if found == '' then
      found = vim.fn.findfile(marker, dir .. ';')
    end
    if found ~= '' then
      return vim.fn.fnamemodify(found, ':p:h:h')
    end
  end
  return dir
end

local function client_config(root)
  local settings = { streetrace = M.config.settings }
  return {
    name = 'sr-lsp',
    cmd = M.config.cmd or { M.config.sr, 'lsp' },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
    init_options = settings,
    settings = settings,
    on_attach = function(client, bufnr)
      -- Completion with <C-x><C-o> where no completion plugin is installed.
      if vim.bo[bufnr].omnifunc == '' then
        vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
      end
      if M.config.on_attach then
        M.config.on_attach(client, bufnr)
      end
    end,
    capabilities = M.config.capabilities,
  }
end

-- The code lenses' commands, carried out here with what the server answers for
-- them (`workspace/executeCommand`, crates/sr-lsp/src/commands.rs).
local function server_command(command, ctx, on_result)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return
  end
  client.request('workspace/executeCommand', { command = command.command, arguments = command.arguments },
    function(err, result)
      if err then
        vim.notify('StreetRace: ' .. err.message, vim.log.levels.ERROR)
      elseif result ~= nil then
        on_result(result)
      end
    end, ctx.bufnr)
end

--- A read-only scratch buffer in a split below, named `name`, showing `text`.
local function show(name, text, filetype)
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = 'nofile', 'wipe', false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[buf].modifiable = false
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

vim.lsp.commands['streetrace.previewPrompt'] = function(command, ctx)
  server_command(command, ctx, function(text) show('Prompt: ' .. tostring(command.arguments[2]), text) end)
end
vim.lsp.commands['streetrace.showGraph'] = function(command, ctx)
  server_command(command, ctx, function(mermaid) show('StreetRace graph', mermaid, 'mermaid') end)
end
vim.lsp.commands['streetrace.run'] = function(command, ctx)
  server_command(command, ctx, function(run)
    vim.cmd('botright new')
    vim.fn.termopen(vim.list_extend({ M.config.sr }, run.args), { cwd = run.cwd })
  end)
end
vim.lsp.commands['streetrace.debug'] = function(command, ctx)
  server_command(command, ctx, function(debug)
    local has_dap, dap = pcall(require, 'dap')
    if has_dap then
      dap.run(debug.configuration)
    else
      vim.notify('StreetRace: debugging needs nvim-dap', vim.log.levels.WARN)
    end
  end)
end

-- Try: `sr try … --format json` (the server's command line, then
-- `config.try_args`), run in the background; its outcome in a scratch buffer
-- `Try: ITEM`. Missing inputs open the inputs file the server names in a
-- split, with a line for each, to fill in and save. The run is recorded (or
-- its `--replay` kept) so that `:StreetraceSaveCase FILE` saves that very run.
local last_try

local function sr_try(line, extra, on_done)
  local cmd = vim.list_extend(vim.list_extend({ M.config.sr }, line.args), extra)
  local out, err = {}, {}
  vim.fn.jobstart(cmd, {
    cwd = line.cwd,
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = function(_, data) out = data end,
    on_stderr = function(_, data) err = data end,
    on_exit = function(_, code)
      vim.schedule(function() on_done(code, table.concat(out, '\n'), table.concat(err, '\n')) end)
    end,
  })
end

local function given(value)
  return value ~= nil and value ~= vim.NIL
end

local function try_text(outcome)
  local lines = { '# ' .. outcome.kind .. ' ' .. outcome.item
    .. (given(outcome.model) and ' (' .. outcome.model .. ')' or '') }
  if outcome.kind == 'agent' then
    table.insert(lines, '# message: ' .. outcome.message)
  end
  if given(outcome.rendered) then
    vim.list_extend(lines, vim.split(outcome.rendered, '\n', { plain = true }))
  end
  if #outcome.tool_calls > 0 then
    table.insert(lines, '# tool calls: ' .. table.concat(outcome.tool_calls, ', '))
  end
  table.insert(lines, '# reply')
  local reply = outcome.reply
  if type(reply) == 'string' then
    vim.list_extend(lines, vim.split(reply, '\n', { plain = true }))
  elseif given(reply) then
    table.insert(lines, vim.fn.json_encode(reply))
  else
    table.insert(lines, '(none: ' .. (given(outcome.error) and outcome.error or outcome.status) .. ')')
  end
  local usage = outcome.usage
  local cost = given(usage.cost_usd) and string.format(', $%.6f', usage.cost_usd) or ''
  table.insert(lines, string.format('# %d input + %d output tokens%s', usage.input_tokens, usage.output_tokens, cost))
  table.insert(lines, '# :StreetraceSaveCase FILE saves this run as an sr eval case')
  return table.concat(lines, '\n')
end

--- Opens the inputs file in a split; when it is empty, with a line for each missing input.
local function open_inputs(path, missing)
  vim.cmd('botright split ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  if #lines <= 1 and (lines[1] or '') == '' then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.tbl_map(function(n) return n .. ': ' end, missing))
  end
end

vim.lsp.commands['streetrace.try'] = function(command, ctx)
  server_command(command, ctx, function(line)
    local extra = vim.deepcopy(M.config.try_args or {})
    local replay
    for i, arg in ipairs(extra) do
      if arg == '--replay' then
        replay = extra[i + 1] and vim.fn.fnamemodify(extra[i + 1], ':p')
      end
    end
    if not replay then
      replay = vim.fn.tempname() .. '.jsonl'
      vim.list_extend(extra, { '--record', replay })
    end
    local lens = (command.arguments or {})[1]
    local item = tostring(type(lens) == 'table' and lens.item or line.args[3])
    sr_try(line, extra, function(code, out, err)
      local ok, outcome = pcall(vim.fn.json_decode, out)
      if ok and type(outcome) == 'table' then
        last_try = { line = line, replay = replay }
        show('Try: ' .. item, try_text(outcome))
        return
      end
      local missing = {}
      for name in err:gmatch("missing input '([^']+)'") do
        table.insert(missing, name)
      end
      vim.notify('StreetRace: ' .. err, vim.log.levels.ERROR)
      if #missing > 0 then
        open_inputs(line.inputs, missing)
      else
        show('Try: ' .. item, err .. (code ~= 0 and ('\nexit ' .. code) or ''))
      end
    end)
  end)
end

--- Saves the last Try's run (served from its recording) as a case of the `sr eval` dataset `file`.
function M.save_case(file)
  if not last_try then
    vim.notify('StreetRace: no Try has run yet', vim.log.levels.WARN)
    return
  end
  local extra = { '--replay', last_try.replay, '--save-case', vim.fn.fnamemodify(file, ':p') }
  sr_try(last_try.line, extra, function(code, out, err)
    local ok, outcome = pcall(vim.fn.json_decode, out)
    if code == 0 and ok and type(outcome) == 'table' and given(outcome.saved_case) then
      vim.notify('StreetRace: saved as case ' .. outcome.saved_case .. ' in ' .. file)
    else
      vim.notify('StreetRace: ' .. err, vim.log.levels.ERROR)
    end
  end)
end

vim.api.nvim_create_user_command('StreetraceSaveCase', function(args) M.save_case(args.args) end,
  { nargs = 1, complete = 'file', desc = "Save the last Try's run as a case of an sr eval dataset" })

-- The references-count lens: its locations (the third argument, as for VS
-- Code's `editor.action.showReferences`) in the quickfix list.
vim.lsp.commands['streetrace.showReferences'] = function(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  local items = vim.lsp.util.locations_to_items(command.arguments[3] or {}, encoding)
  vim.fn.setqflist({}, ' ', { title = command.title, items = items })
  vim.cmd('botright copen')
end

--- The language server clients attached to a buffer (0.7 and 0.11 name this apart).
local function buffer_clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
end

--- Renames or moves the current file to `new_name` (`:StreetraceRenameFile NEW`), as
--- VS Code's explorer does: first the server's edit for `workspace/willRenameFiles`,
--- which rewrites the imports naming the file (the buffers it changes are left
--- unsaved), then the rename on disk.
function M.rename_file(new_name)
  local bufnr = vim.api.nvim_get_current_buf()
  local old = vim.api.nvim_buf_get_name(bufnr)
  local new = vim.fn.fnamemodify(new_name, ':p')
  local params = { files = { { oldUri = vim.uri_from_fname(old), newUri = vim.uri_from_fname(new) } } }
  for _, client in ipairs(buffer_clients(bufnr)) do
    local operations = (client.server_capabilities.workspace or {}).fileOperations or {}
    if operations.willRename then
      local response = client.request_sync('workspace/willRenameFiles', params, 5000, bufnr) or {}
      if response.err then
        vim.notify('StreetRace: ' .. response.err.message, vim.log.levels.ERROR)
      elseif response.result then
        vim.lsp.util.apply_workspace_edit(response.result, client.offset_encoding)
      end
    end
  end
  vim.fn.mkdir(vim.fn.fnamemodify(new, ':h'), 'p')
  vim.lsp.util.rename(old, new)
end

vim.api.nvim_create_user_command('StreetraceRenameFile', function(args) M.rename_file(args.args) end,
  { nargs = 1, complete = 'file', desc = 'Rename the StreetRace file, updating the imports that name it' })

--- Attaches the language server to a buffer, starting it for the buffer's root if needed.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = root_dir(bufnr)
  if vim.lsp.start then
    return vim.lsp.start(client_config(root), { bufnr = bufnr })
  end
  local id = clients_by_root[root]
  if not (id and vim.lsp.get_client_by_id(id)) then
    id = vim.lsp.start_client(client_config(root))
    clients_by_root[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

--- Answers the `escalate to human` the debugged run waits on (`:StreetraceAnswer TEXT`):
--- the adapter's `streetraceAnswer` request; the run gets the answer at the next continue.
--- Evaluating an expression in the REPL never answers (`:answer TEXT` there does).
function M.answer(text, thread_id)
  local dap = require('dap')
  local session = dap.session()
  if not session then
    vim.notify('StreetRace: no debug session', vim.log.levels.WARN)
    return
  end
  if text == nil or text == '' then
    text = vim.fn.input('Answer: ')
  end
  session:request('streetraceAnswer', { text = text, threadId = thread_id }, function(err, body)
    if err then
      vim.notify('StreetRace: ' .. (err.message or tostring(err)), vim.log.levels.ERROR)
    else
      vim.notify(('StreetRace: answered "%s"; continue to give it to the run'):format(body.question))
    end
  end)
end

--- The debug session, or nil with a warning.
local function dap_session()
  local session = require('dap').session()
  if not session then
    vim.notify('StreetRace: no debug session', vim.log.levels.WARN)
  end
  return session
end

--- Makes the stopped thread go live where it is (`:StreetraceRunLive`): the adapter's
--- `streetraceRunLiveFrom`. When it resumes, its model and tool calls are made for real
--- instead of served from the recording (to retry a tool after fixing its cause), in a
--- new fork where the run had gone further.
function M.run_live(thread_id)
  local session = dap_session()
  if not session then
    return
  end
  thread_id = thread_id or session.stopped_thread_id
  session:request('streetraceRunLiveFrom', { threadId = thread_id }, function(err, body)
    if err then
      vim.notify('StreetRace: ' .. (err.message or tostring(err)), vim.log.levels.ERROR)
    else
      vim.notify(('StreetRace: thread %d goes live when it resumes (continue or step)'):format(body.threadId))
    end
  end)
end

--- Lists the run's forks and goes to the one chosen (`:StreetraceForks`): the adapter's
--- `streetraceForks` and `streetraceSwitchFork`. The run stops where that fork parts
--- from the current one, with its files.
function M.forks()
  local session = dap_session()
  if not session then
    return
  end
  session:request('streetraceForks', {}, function(err, body)
    if err then
      vim.notify('StreetRace: ' .. (err.message or tostring(err)), vim.log.levels.ERROR)
      return
    end
    local function shown(fork)
      local from = fork.parent and (' (from fork %d)'):format(fork.parent) or ''
      return ('%s fork %d: %s%s'):format(fork.current and '*' or ' ', fork.id, fork.label, from)
    end
    vim.ui.select(body.forks, { prompt = 'Go to a fork of the run:', format_item = shown }, function(fork)
      if not fork or fork.current then
        return
      end
      session:request('streetraceSwitchFork', { id = fork.id }, function(switch_err)
        if switch_err then
          vim.notify('StreetRace: ' .. (switch_err.message or tostring(switch_err)), vim.log.levels.ERROR)
        end
      end)
    end)
  end)
end

--- Registers the `streetrace` adapter and launch configurations with nvim-dap.
function M.setup_dap(dap)
  dap.adapters.streetrace = { type = 'executable', command = M.config.sr, args = { 'dap' } }
  -- A stop on one flow thread must not resume the other parallel branches.
  -- (nvim-dap creates `defaults.<type>` on first access, falling back to `defaults.fallback`.)
  if dap.defaults and dap.defaults.streetrace then
    dap.defaults.streetrace.auto_continue_if_many_stopped = false
  end
  -- A thread waits for an answer to `escalate to human`: say how to give one.
  if dap.listeners then
    dap.listeners.after.event_streetraceQuestion.streetrace = function(_, body)
      if body and body.question then
        vim.notify(('StreetRace: the run asks "%s" (thread %d): :StreetraceAnswer TEXT, then continue')
          :format(body.question, body.threadId))
      end
    end
  end
  vim.api.nvim_create_user_command('StreetraceAnswer', function(args) M.answer(args.args) end,
    { nargs = '?', desc = 'Answer the escalate to human the debugged StreetRace run waits on' })
  vim.api.nvim_create_user_command('StreetraceRunLive', function() M.run_live() end,
    { desc = 'Make the stopped thread of the debugged StreetRace run go live where it is' })
  vim.api.nvim_create_user_command('StreetraceForks', function() M.forks() end,
    { desc = 'Go to a fork of the debugged StreetRace run' })
  local function prompt()
    return vim.fn.input('Prompt ($input_prompt): ')
  end
  dap.configurations.streetrace = {
    {
      type = 'streetrace',
      request = 'launch',
      name = 'Debug this file',
      program = '${file}',
      workDir = '${workspaceFolder}',
      prompt = prompt,
      stopOnEntry = true,
    },
    {
      type = 'streetrace',
      request = 'launch',
      name = 'Run this file to the first breakpoint',
      program = '${file}',
      workDir = '${workspaceFolder}',
      prompt = prompt,
      stopOnEntry = false,
    },
  }
end

--- Configures the plugin: `require('streetrace').setup({ sr = '/path/to/sr', settings = { … } })`.
function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  local group = vim.api.nvim_create_augroup('streetrace', { clear = true })
  -- Installed from a subdirectory (lazy.nvim `config`), ftdetect/ may be read too late.
  vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
    group = group,
    pattern = '*.sr',
    command = 'setfiletype streetrace',
  })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = 'streetrace',
    callback = function(args) M.attach(args.buf) end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype == 'streetrace' then
      M.attach(bufnr)
    end
  end
  local has_dap, dap = pcall(require, 'dap')
  if has_dap then
    M.setup_dap(dap)
  end
end

--- Registers `streetrace` with nvim-lspconfig (before 2.x, which reads lsp/streetrace.lua),
--- so that `require('lspconfig').streetrace.setup({})` works.
function M.lspconfig()
  local configs = require('lspconfig.configs')
  if not configs.streetrace then
    configs.streetrace = {
      default_config = {
        cmd = { M.config.sr, 'lsp' },
        filetypes = { 'streetrace' },
        root_dir = function(fname)
          return require('lspconfig.util').root_pattern(unpack(M.config.root_markers))(fname)
            or vim.fn.fnamemodify(fname, ':p:h')
        end,
        settings = { streetrace = M.config.settings },
      },
    }
  end
  return configs.streetrace
end

return M
