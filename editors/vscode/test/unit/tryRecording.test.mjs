// Temporary Try recordings (src/tryRecording.ts): the last successful Try's is
// kept until the next one succeeds or the extension stops, a failed Try's is
// removed at once, a recording the user named is never removed.
// `npm run test:unit`.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { TryRecordings } from '../../out/test/tryRecording.js';

/** What `sr try --record FILE` does: writes the file. */
const record = (file) => fs.writeFileSync(file, '{}\n');

test('only the last successful Try keeps its recording, and none outlives the extension', () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'streetrace-try-test-'));
  const recordings = new TryRecordings(folder);
  const first = recordings.fresh();
  record(first);
  recordings.keep(first);
  const failed = recordings.fresh();
  record(failed);
  recordings.discard(failed);
  assert.deepEqual(fs.readdirSync(folder), [path.basename(first)]);

  const second = recordings.fresh();
  record(second);
  recordings.keep(second);
  assert.deepEqual(fs.readdirSync(folder), [path.basename(second)]);

  const named = path.join(folder, 'mine.jsonl');
  record(named);
  recordings.keep(named);
  recordings.discard(named);
  assert.deepEqual(fs.readdirSync(folder), ['mine.jsonl']);

  const last = recordings.fresh();
  record(last);
  recordings.keep(last);
  recordings.dispose();
  assert.deepEqual(fs.readdirSync(folder), ['mine.jsonl']);
  fs.rmSync(folder, { recursive: true });
});
