// Microsoft's DebugClient against the real `sr dap`, on the fixture flow
// replayed from its recording (no model, no network). run.sh builds `sr` and
// sets SR_BIN.
'use strict';

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const ROOT = path.resolve(__dirname, '../../../..');
const SR = process.env.SR_BIN || path.join(ROOT, 'target/debug/sr');
const FIXTURES = path.join(ROOT, 'crates/sr-dap/tests/fixtures');
const PROGRAM = path.join(FIXTURES, 'debug.sr');
const LAUNCH = {
  program: PROGRAM,
  replay: path.join(FIXTURES, 'debug.cassette.jsonl'),
  prompt: 'Greet Ada',
  workDir: FIXTURES,
};

describe('sr-dap under DebugClient', function () {
  let dc;

  beforeEach(function () {
    dc = new DebugClient(SR, 'dap', 'streetrace', { cwd: FIXTURES });
    dc.defaultTimeout = 15000;
    return dc.start();
  });

  afterEach(function () {
    return dc.stop();
  });

  async function topFrame(threadId) {
    const stack = await dc.stackTraceRequest({ threadId });
    return stack.body.stackFrames[0];
  }

  async function variables(frameId) {
    const scopes = await dc.scopesRequest({ frameId });
    const locals = scopes.body.scopes.find((s) => s.name === 'Variables');
    const response = await dc.variablesRequest({ variablesReference: locals.variablesReference });
    return Object.fromEntries(response.body.variables.map((v) => [v.name, v]));
  }

  it('advertises what it implements', async function () {
    const response = await dc.initializeRequest();
    const caps = response.body;
    for (const cap of [
      'supportsConfigurationDoneRequest',
      'supportsConditionalBreakpoints',
      'supportsHitConditionalBreakpoints',
      'supportsLogPoints',
      'supportsFunctionBreakpoints',
      'supportsSetVariable',
      'supportsEvaluateForHovers',
      'supportsRestartRequest',
      'supportsTerminateRequest',
      'supportsClipboardContext',
    ]) {
      assert.strictEqual(caps[cap], true, cap);
    }
    assert.deepStrictEqual(
      caps.exceptionBreakpointFilters.map((f) => f.filter),
      ['uncaught', 'caught', 'tool-error', 'llm-error', 'escalation'],
    );
  });

  it('stops at a breakpoint, steps, reads variables, evaluates and runs to the end', async function () {
    const streamed = dc.assertOutput('stdout', 'Hello Ada, engine lover!');
    // `$count = run count_up`, after the agent ran.
    await dc.hitBreakpoint(LAUNCH, { path: PROGRAM, line: 27 });
    await streamed;

    const threads = await dc.threadsRequest();
    assert.deepStrictEqual(threads.body.threads, [{ id: 1, name: 'main' }]);
    let frame = await topFrame(1);
    assert.strictEqual(frame.name, 'flow main');
    let vars = await variables(frame.id);
    assert.strictEqual(vars.greeting.value, '"Hello Ada, engine lover!"');
    assert.strictEqual(vars.count.value, '1');
    assert.strictEqual(vars.profile.namedVariables, 2);
    const profile = await dc.variablesRequest({ variablesReference: vars.profile.variablesReference });
    const tags = profile.body.variables.find((v) => v.name === 'tags');
    assert.strictEqual(tags.indexedVariables, 2);
    const second = await dc.variablesRequest({
      variablesReference: tags.variablesReference,
      filter: 'indexed',
      start: 1,
      count: 1,
    });
    assert.deepStrictEqual(second.body.variables.map((v) => [v.name, v.value]), [['[1]', '"engines"']]);

    // Step over the flow call: the next statement, with the flow's result.
    await Promise.all([dc.nextRequest({ threadId: 1 }), dc.assertStoppedLocation('step', { path: PROGRAM, line: 28 })]);
    frame = await topFrame(1);
    vars = await variables(frame.id);
    assert.strictEqual(vars.count.value, '2');

    const evaluated = await dc.evaluateRequest({
      expression: '$count * 10 + len($profile.tags)',
      frameId: frame.id,
      context: 'repl',
    });
    assert.strictEqual(evaluated.body.result, '22');
    const hover = await dc.evaluateRequest({ expression: 'greeting', frameId: frame.id, context: 'hover' });
    assert.strictEqual(hover.body.result, '"Hello Ada, engine lover!"');
    await assert.rejects(dc.evaluateRequest({ expression: '$nope', frameId: frame.id, context: 'repl' }), /not defined/);

    const set = await dc.setVariableRequest({
      variablesReference: (await dc.scopesRequest({ frameId: frame.id })).body.scopes[0].variablesReference,
      name: 'count',
      value: '41 + 1',
    });
    assert.strictEqual(set.body.value, '42');
    const logged = dc.assertOutput('stdout', 'count is 42\n');
    await Promise.all([dc.continueRequest({ threadId: 1 }), dc.waitForEvent('terminated')]);
    await logged;
  });

  it('steps into a flow and out of it', async function () {
    await dc.hitBreakpoint(LAUNCH, { path: PROGRAM, line: 27 });
    await Promise.all([dc.stepInRequest({ threadId: 1 }), dc.assertStoppedLocation('step', { path: PROGRAM, line: 20 })]);
    const stack = await dc.stackTraceRequest({ threadId: 1 });
    assert.deepStrictEqual(stack.body.stackFrames.map((f) => [f.name, f.line]), [['flow count_up', 20], ['flow main', 27]]);
    await Promise.all([dc.stepOutRequest({ threadId: 1 }), dc.assertStoppedLocation('step', { path: PROGRAM, line: 28 })]);
    await Promise.all([dc.continueRequest({ threadId: 1 }), dc.waitForEvent('terminated')]);
  });

  /** A program of its own in a fresh directory (no model: these need none). */
  function program(name, source) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sr-dap-client-'));
    const file = path.join(dir, name);
    fs.writeFileSync(file, source);
    return file;
  }

  it('copies a whole value with Copy Value (the clipboard context)', async function () {
    const file = program('copy.sr', 'streetrace v1\n\nflow main:\n    $long = "x" * 23889\n    return len($long)\n');
    const init = await dc.initializeRequest();
    assert.strictEqual(init.body.supportsClipboardContext, true);
    await dc.hitBreakpoint({ program: file, workDir: path.dirname(file), prompt: '' }, { path: file, line: 5 });
    const frame = await topFrame(1);
    const long = (await variables(frame.id)).long;
    assert.strictEqual(long.value.length, 10002, 'the Variables view shows a preview');
    // What VS Code's Copy Value sends when the adapter supports the clipboard context.
    const copied = await dc.evaluateRequest({ expression: long.evaluateName, frameId: frame.id, context: 'clipboard' });
    assert.strictEqual(copied.body.result, 'x'.repeat(23889));
    const watched = await dc.evaluateRequest({ expression: long.evaluateName, frameId: frame.id, context: 'watch' });
    assert.strictEqual(watched.body.result.length, 10002);
    await Promise.all([dc.continueRequest({ threadId: 1 }), dc.waitForEvent('terminated')]);
  });

  it('answers escalate to human with the streetraceAnswer request, never by evaluating', async function () {
    const source = 'streetrace v1\n\nflow main:\n    $draft = "Dear team"\n    escalate to human "send it?"\n    return $human_input\n';
    const file = program('ask.sr', source);
    const question = dc.waitForEvent('streetraceQuestion');
    const stopped = dc.waitForEvent('stopped');
    await Promise.all([
      dc.launch({ program: file, workDir: path.dirname(file), prompt: '' }),
      dc.configurationSequence(),
    ]);
    assert.strictEqual((await stopped).body.reason, 'exception');
    assert.deepStrictEqual((await question).body, { threadId: 1, question: 'send it?' });
    const draft = await dc.evaluateRequest({ expression: '$draft', context: 'repl' });
    assert.strictEqual(draft.body.result, '"Dear team"');
    const answered = await dc.customRequest('streetraceAnswer', { threadId: 1, text: 'send it now' });
    assert.deepStrictEqual(answered.body, { threadId: 1, question: 'send it?' });
    const console = [];
    dc.on('output', (event) => event.body.category === 'console' && console.push(event.body.output));
    await Promise.all([dc.continueRequest({ threadId: 1 }), dc.waitForEvent('terminated')]);
    assert.ok(console.includes('run completed: send it now\n'), console.join(''));
  });

  it('forks after going back, lists the forks and goes to the original run with its files', async function () {
    const source =
      'streetrace v1\n\ntool fs = builtin streetrace.fs\n\nflow main:\n    $v = "apple"\n' +
      '    fs.write_file("${v}.txt", $v)\n    return $v\n';
    const file = program('fork.sr', source);
    const dir = path.dirname(file);
    await dc.hitBreakpoint({ program: file, workDir: dir, prompt: '' }, { path: file, line: 8 });
    assert.ok(fs.existsSync(path.join(dir, 'apple.txt')));
    // Back before the write, another value, on: fork 2.
    await Promise.all([dc.stepBackRequest({ threadId: 1 }), dc.waitForEvent('stopped')]);
    await Promise.all([dc.stepBackRequest({ threadId: 1 }), dc.waitForEvent('stopped')]);
    assert.strictEqual((await topFrame(1)).line, 7);
    assert.ok(!fs.existsSync(path.join(dir, 'apple.txt')), 'undone');
    const frame = await topFrame(1);
    const scopes = await dc.scopesRequest({ frameId: frame.id });
    const locals = scopes.body.scopes.find((s) => s.name === 'Variables').variablesReference;
    await dc.setVariableRequest({ variablesReference: locals, name: 'v', value: '"pear"' });
    await Promise.all([dc.continueRequest({ threadId: 1 }), dc.waitForEvent('stopped')]);
    assert.strictEqual(fs.readFileSync(path.join(dir, 'pear.txt'), 'utf8'), 'pear');
    assert.ok(!fs.existsSync(path.join(dir, 'apple.txt')));
    const listed = await dc.customRequest('streetraceForks', {});
    assert.deepStrictEqual(
      listed.body.forks.map((f) => [f.id, f.parent, f.reason, f.label, f.current]),
      [
        [1, undefined, undefined, 'the original run', false],
        [2, 1, 'edit', '$v edited at fork.sr:7 (main)', true],
      ],
    );
    // The original run, where fork 2 left it; on to its end, with its file.
    const goto = dc.waitForEvent('stopped');
    await dc.customRequest('streetraceSwitchFork', { id: 1 });
    assert.strictEqual((await goto).body.reason, 'goto');
    assert.ok(!fs.existsSync(path.join(dir, 'pear.txt')), "fork 2's file is gone");
    const live = await dc.customRequest('streetraceRunLiveFrom', { threadId: 1 });
    assert.strictEqual(live.body.threadId, 1);
    await Promise.all([dc.continueRequest({ threadId: 1 }), dc.waitForEvent('stopped')]);
    assert.strictEqual(fs.readFileSync(path.join(dir, 'apple.txt'), 'utf8'), 'apple');
    const forks = (await dc.customRequest('streetraceForks', {})).body.forks;
    assert.deepStrictEqual(
      forks.map((f) => [f.id, f.parent, f.reason]),
      [
        [1, undefined, undefined],
        [2, 1, 'edit'],
        [3, 1, 'live'],
      ],
    );
    await assert.rejects(dc.customRequest('streetraceSwitchFork', { id: 3 }), /fork 3 is the one the run is in/);
    await Promise.all([dc.continueRequest({ threadId: 1 }), dc.waitForEvent('terminated')]);
  });

  it('reports a program that does not compile', async function () {
    const broken = path.join(FIXTURES, 'broken.sr');
    const terminated = dc.waitForEvent('terminated');
    const diagnostics = dc.assertOutput('stderr', `${broken}:4:20: error[E0001]: undefined reference to agent 'missing'\n`);
    await assert.rejects(dc.launch({ program: broken }), /has 1 error/);
    await diagnostics;
    await terminated;
  });
});
