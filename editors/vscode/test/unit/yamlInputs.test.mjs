// Writing the Try inputs file (src/yamlInputs.ts): hostile values as YAML
// strings, and other keys, comments and blank lines kept. `npm run test:unit`.
// hostile.inputs.yaml is what the writer makes of hostile.inputs.json; the
// language server's test `the_inputs_file_gives_the_values_of_the_variables_read`
// (crates/sr-lsp/src/commands.rs) reads it back with `sr try`'s YAML reader
// and gets hostile.inputs.json's values.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { test } from 'node:test';

import { setInputs, yamlKey, yamlString } from '../../out/test/yamlInputs.js';

const fixture = (name) => new URL(name, import.meta.url);
const hostile = new Map(Object.entries(JSON.parse(fs.readFileSync(fixture('hostile.inputs.json'), 'utf8'))));

test('hostile values are written as the YAML the reader takes back', () => {
  assert.equal(setInputs('', hostile), fs.readFileSync(fixture('hostile.inputs.yaml'), 'utf8'));
});

test('a value is one double-quoted line, every unprintable character escaped', () => {
  assert.equal(yamlString('say "hi": \\ # - x'), '"say \\"hi\\": \\\\ # - x"');
  assert.equal(yamlString('a\nb\r\tc'), '"a\\nb\\x0D\\tc"');
  assert.equal(yamlString('\u0000\u001f\u007f\u0085\u009f'), '"\\x00\\x1F\\x7F\\x85\\x9F"');
  assert.equal(yamlString('\u2028\u2029\ufeff\uffff'), '"\\u2028\\u2029\\uFEFF\\uFFFF"');
  assert.equal(yamlString('🚀 é'), '"🚀 é"');
  assert.equal(yamlString('\ud800x'), '"\ufffdx"');
  assert.equal(yamlString(''), '""');
});

test('a key is plain only when no reader takes it for something else', () => {
  assert.equal(yamlKey('topic_2'), 'topic_2');
  for (const key of ['on', 'No', 'TRUE', 'null', '2x', 'a b', 'a:b']) {
    assert.equal(yamlKey(key), JSON.stringify(key));
  }
});

test('a key in the file has its value replaced, with the lines of its value; the rest stays', () => {
  const text = [
    '# inputs of greet',
    'name: Ann # the old one',
    'doc: |',
    '  line 1',
    '',
    '  line 3',
    '',
    'list:',
    '- a',
    '- b',
    '"topic": old',
    'kept: {a: 1}',
    '',
  ].join('\n');
  const values = new Map([
    ['name', 'Bob'],
    ['doc', 'new'],
    ['list', 'x'],
    ['topic', 'rust'],
    ['added', 'at the end'],
  ]);
  assert.equal(
    setInputs(text, values),
    [
      '# inputs of greet',
      'name: "Bob"',
      'doc: "new"',
      '',
      'list: "x"',
      'topic: "rust"',
      'kept: {a: 1}',
      'added: "at the end"',
      '',
    ].join('\n'),
  );
});

test('line ends are kept, a last line without one gets one, and an empty write leaves an empty file', () => {
  assert.equal(setInputs('a: 1\r\nb: 2\r\n', new Map([['b', 'x']])), 'a: 1\r\nb: "x"\r\n');
  assert.equal(setInputs('a: 1', new Map([['b', 'x']])), 'a: 1\nb: "x"\n');
  assert.equal(setInputs('---\n', new Map([['b', 'x']])), '---\nb: "x"\n');
  assert.equal(setInputs('', new Map()), '');
});

test('a file that is not one `name: value` per line is refused, not rewritten', () => {
  for (const [text, line] of [
    ['{name: Ann}\n', 1],
    ['- a\n', 1],
    ['a: 1\n---\nb: 2\n', 2],
    ['a: 1\n? complex\n', 2],
    ['a: "two\nlines"\n', 2],
  ]) {
    assert.throws(() => setInputs(text, new Map([['a', 'x']])), { message: new RegExp(`^line ${line} is not a`) }, text);
  }
});
