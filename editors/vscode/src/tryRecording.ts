// Where an editor Try records its run. Each Try gets a new file in the
// system's temporary folder; only the last successful Try's is kept ("Save as
// eval case" replays it), a failed Try's is removed at once, and the kept one
// when the extension stops. A recording the user named (`--replay` in
// `streetrace.try.args`) is theirs: it is never removed.

import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

export class TryRecordings {
  /** The temporary recording kept for the last successful Try. */
  private kept: string | undefined;
  /** Every temporary recording handed out and not yet removed. */
  private readonly made = new Set<string>();

  constructor(private readonly folder: string = os.tmpdir()) {}

  /** A new temporary recording's path (the file is created by `sr try --record`). */
  fresh(): string {
    const file = path.join(this.folder, `streetrace-try-${randomBytes(6).toString('hex')}.jsonl`);
    this.made.add(file);
    return file;
  }

  /** `file` holds the last successful Try: the recording kept before it is removed. */
  keep(file: string): void {
    if (this.kept !== undefined && this.kept !== file) {
      this.remove(this.kept);
    }
    this.kept = this.made.has(file) ? file : undefined;
  }

  /** The Try that recorded to `file` failed: a temporary recording is removed. */
  discard(file: string): void {
    if (file !== this.kept) {
      this.remove(file);
    }
  }

  /** Removes every temporary recording (the extension stops). */
  dispose(): void {
    for (const file of [...this.made]) {
      this.remove(file);
    }
    this.kept = undefined;
  }

  private remove(file: string): void {
    if (this.made.delete(file)) {
      fs.rmSync(file, { force: true });
    }
  }
}
