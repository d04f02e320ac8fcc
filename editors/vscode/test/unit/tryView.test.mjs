// The Try page (src/tryView.ts): what `sr try --format json` answered, escaped,
// with the two command links the webview allows; the inputs form, escaped,
// with missing inputs marked; the messages its script may post. `npm run
// test:unit`.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import vm from 'node:vm';

import { FORM_SCRIPT, fields, form, missingInputs, readTry, render, toWrite } from '../../out/test/tryView.js';

const prompt = {
  item: 'ask',
  kind: 'prompt',
  model: 'openai/gpt-4o-mini',
  message: '',
  rendered: 'Explain <b>borrowing</b> & lifetimes.',
  reply: 'Borrowing lends.',
  tool_calls: [],
  usage: { input_tokens: 12, output_tokens: 6, cost_usd: 0.000024 },
  status: 'completed',
  error: null,
  saved_case: null,
};

test('a prompt shows its rendered text, reply, tokens and cost, escaped', () => {
  assert.equal(
    render(prompt),
    [
      '<h3>prompt ask (openai/gpt-4o-mini)</h3>',
      '<pre>Explain &#60;b&#62;borrowing&#60;/b&#62; &#38; lifetimes.</pre>',
      '<h3>reply</h3>',
      '<pre>Borrowing lends.</pre>',
      '<p class="source">12 input + 6 output tokens, $0.000024</p>',
      '<p><a href="command:streetrace.saveTryCase">Save as eval case</a></p>',
    ].join('\n'),
  );
});

test('an agent shows its message and tool calls; a structured reply is JSON; a failure its error', () => {
  const agent = { ...prompt, kind: 'agent', item: 'writer', message: 'Write it', tool_calls: ['write_file'], reply: { ok: true } };
  const page = render(agent);
  assert.match(page, /<p class="source">message: Write it<\/p>/);
  assert.match(page, /<p class="source">tool calls: write_file<\/p>/);
  assert.match(page, /<pre>\{\n {2}&#34;ok&#34;: true\n\}<\/pre>/);
  const failed = render({ ...prompt, reply: null, status: 'failed', error: 'model said no', usage: { input_tokens: 0, output_tokens: 0 } });
  assert.match(failed, /<p class="error">model said no<\/p>/);
  assert.match(failed, /0 input \+ 0 output tokens<\/p>/);
});

test('the form has a text area per input, started from the file, names and values escaped, missing ones marked', () => {
  const values = { who: 'Ann & <b>"Bo"</b>', doc: { title: 'T' }, n: 2 };
  const inputs = fields(['who', 'doc', 'n', 'x"><script>', 'topic'], values, ['topic']);
  assert.deepEqual(
    inputs.map((f) => [f.name, f.value, f.inFile, f.notText, f.missing]),
    [
      ['who', 'Ann & <b>"Bo"</b>', true, false, false],
      ['doc', '{"title":"T"}', true, true, false],
      ['n', '2', true, true, false],
      ['x"><script>', '', false, false, false],
      ['topic', '', false, false, true],
    ],
  );
  assert.equal(
    form(inputs),
    [
      '<h3>inputs</h3>',
      '<form id="inputs">',
      '<label for="input-0">who</label>',
      '<textarea id="input-0" name="who" rows="3">\nAnn &#38; &#60;b&#62;&#34;Bo&#34;&#60;/b&#62;</textarea>',
      '<label for="input-1">doc</label>',
      '<textarea id="input-1" name="doc" rows="3">\n{&#34;title&#34;:&#34;T&#34;}</textarea>',
      '<p class="source">not text in the inputs file: a change is saved as text</p>',
      '<label for="input-2">n</label>',
      '<textarea id="input-2" name="n" rows="3">\n2</textarea>',
      '<p class="source">not text in the inputs file: a change is saved as text</p>',
      '<label for="input-3">x&#34;&#62;&#60;script&#62;</label>',
      '<textarea id="input-3" name="x&#34;&#62;&#60;script&#62;" rows="3">\n</textarea>',
      '<label for="input-4">topic</label> <span class="missing">missing</span>',
      '<textarea id="input-4" name="topic" rows="3" class="missing">\n</textarea>',
      '<p><button type="submit">Try with these inputs</button> <a href="command:streetrace.editTryInputs">Edit the inputs file</a></p>',
      '</form>',
    ].join('\n'),
  );
});

test('the form says when the item reads nothing and when the inputs file could not be read', () => {
  const page = form([], 'greet.inputs.yaml:2:1: the inputs are a map <of> …');
  assert.match(page, /<p class="error">greet.inputs.yaml:2:1: the inputs are a map &#60;of&#62; …<\/p>/);
  assert.match(page, /<p class="source">It reads no variables.<\/p>/);
  assert.match(page, /<button type="submit">Try with these inputs<\/button>/);
});

test('the missing inputs are those sr try names, and an agent\'s missing message', () => {
  const stderr = [
    "/w/try.sr:2:22: error: missing input 'name' (read by prompt 'greet')",
    "/w/try.sr:1:14: error: missing input 'mood' (read by prompt 'tone')",
    'error: greet needs inputs: add them to /w/greet.inputs.yaml',
  ].join('\n');
  assert.deepEqual(missingInputs(stderr), ['name', 'mood']);
  const agent = 'error: agent writer needs a message: give --prompt TEXT or `input_prompt:` in /w/writer.inputs.yaml';
  assert.deepEqual(missingInputs(agent), ['input_prompt']);
  assert.deepEqual(missingInputs('error: /w/try.sr has errors; run `sr check /w/try.sr`'), []);
});

test('only a try message with text for offered inputs is read', () => {
  const offered = ['name', 'topic'];
  assert.deepEqual(readTry({ type: 'try', values: { name: 'Bob', topic: '' } }, offered), new Map([['name', 'Bob'], ['topic', '']]));
  assert.deepEqual(readTry({ type: 'try', values: {} }, offered), new Map());
  for (const message of [
    undefined,
    null,
    'try',
    { type: 'run', values: { name: 'Bob' } },
    { values: { name: 'Bob' } },
    { type: 'try' },
    { type: 'try', values: null },
    { type: 'try', values: ['Bob'] },
    { type: 'try', values: { name: 7 } },
    { type: 'try', values: { name: { toString: 'Bob' } } },
    { type: 'try', values: { name: 'Bob', other: 'x' } },
    { type: 'try', values: JSON.parse('{"__proto__": "x"}') },
  ]) {
    assert.equal(readTry(message, offered), undefined, JSON.stringify(message));
  }
});

test('a Try writes the inputs not in the file and those changed, nothing else', () => {
  const inputs = fields(['name', 'doc', 'topic', 'mood'], { name: 'Ann', doc: { a: 1 }, mood: 'calm' }, []);
  const typed = new Map([
    ['name', 'Ann'],
    ['doc', '{"a":1}'],
    ['topic', ''],
    ['mood', 'stormy'],
  ]);
  assert.deepEqual(toWrite(inputs, typed), new Map([['topic', ''], ['mood', 'stormy']]));
});

test("the page's script posts every field as typed, a variable named __proto__ too", () => {
  const typed = [
    { name: 'topic', value: 'a <b> & "c"' },
    { name: '__proto__', value: 'kept' },
    { name: 'constructor', value: '' },
  ];
  const posted = [];
  let submit;
  const button = { disabled: false };
  const formElement = {
    addEventListener: (kind, listener) => (submit = kind === 'submit' ? listener : submit),
    querySelectorAll: (selector) => (selector === 'textarea' ? typed : []),
    querySelector: (selector) => (selector === 'button' ? button : null),
  };
  vm.runInNewContext(FORM_SCRIPT, {
    acquireVsCodeApi: () => ({ postMessage: (message) => posted.push(structuredClone(message)) }),
    document: { getElementById: (id) => (id === 'inputs' ? formElement : null) },
  });
  let prevented = false;
  submit({ preventDefault: () => (prevented = true) });
  assert.ok(prevented, 'the form is not sent anywhere');
  assert.ok(button.disabled, 'one Try at a time');
  assert.equal(posted.length, 1);
  const values = readTry(posted[0], ['topic', '__proto__', 'constructor']);
  assert.deepEqual(values, new Map(typed.map(({ name, value }) => [name, value])));
});
