// Settings that choose a program or widen a run (src/settings.ts and
// package.json): a workspace cannot set them, an untrusted one's relative
// path is never run, and a workspace never adds an opt-in flag.
// `npm run test:unit`.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { OPT_IN_FLAGS, executable, runArgs } from '../../out/test/settings.js';

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const properties = manifest.contributes.configuration.properties;
const untrusted = manifest.capabilities.untrustedWorkspaces;

/** Settings that name a program (`…path`) or add arguments (`…args`). */
const dangerous = Object.keys(properties).filter((name) => /(path|args)$/i.test(name));

test('every setting that names a program or adds arguments is kept from untrusted workspaces', () => {
  assert.deepEqual(dangerous.sort(), [
    'streetrace.path',
    'streetrace.run.args',
    'streetrace.server.path',
    'streetrace.try.args',
  ]);
  assert.equal(untrusted.supported, 'limited');
  for (const name of dangerous) {
    assert.ok(untrusted.restrictedConfigurations.includes(name), `${name} is restricted in untrusted workspaces`);
  }
});

test('program paths are machine-scoped: no workspace sets them', () => {
  for (const name of dangerous.filter((name) => properties[name].type === 'string')) {
    assert.equal(properties[name].scope, 'machine', name);
  }
});

test('a relative program path is taken from the workspace only when it is trusted', () => {
  const folder = '/home/u/project';
  assert.deepEqual(executable('bin/sr', folder, true, '/home/u'), { command: '/home/u/project/bin/sr' });
  for (const value of ['bin/sr', './sr-lsp', '../x/sr']) {
    const { command, refused } = executable(value, folder, false, '/home/u');
    assert.equal(command, undefined, value);
    assert.match(refused, /not trusted/);
    assert.equal(executable(value, undefined, true, '/home/u').command, undefined, `${value} without a folder`);
  }
  assert.deepEqual(executable('/opt/sr', folder, false, '/home/u'), { command: '/opt/sr' });
  assert.deepEqual(executable('~/bin/sr', folder, false, '/home/u'), { command: '/home/u/bin/sr' });
  assert.deepEqual(executable('sr', folder, false, '/home/u'), { command: 'sr' });
  assert.deepEqual(executable('  ', folder, true, '/home/u'), {});
});

test("a workspace's run arguments never add an opt-in flag, and an untrusted one's are not used", () => {
  const user = ['--model', 'openai/gpt-4o'];
  for (const flag of OPT_IN_FLAGS) {
    for (const spelled of [flag, `${flag}=true`]) {
      for (const key of ['workspaceValue', 'workspaceFolderValue']) {
        const inspected = { globalValue: user, [key]: ['--replay', 'r.jsonl', spelled] };
        assert.deepEqual(runArgs(inspected, true), { args: ['--replay', 'r.jsonl'], dropped: [spelled] });
        assert.deepEqual(runArgs(inspected, false), { args: user, dropped: [] });
      }
    }
    // The user's own settings may.
    assert.deepEqual(runArgs({ globalValue: [flag] }, true), { args: [flag], dropped: [] });
  }
  assert.deepEqual(runArgs({}, true), { args: [], dropped: [] });
});
