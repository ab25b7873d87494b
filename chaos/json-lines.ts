import { createWriteStream, type WriteStream } from 'node:fs';

/**
 * What a chaos run recorded (calls, intents): in memory for its checker, and one JSON line each in
 * the run dir so a failed run can be read afterwards. `file` null: memory only.
 */
export class JsonLines<T> {
  readonly records: T[] = [];
  private readonly out: WriteStream | null;
  private n = 0;
  constructor(file: string | null) {
    this.out = file ? createWriteStream(file, { flags: 'w' }) : null;
  }
  /** The next number in the order records are made (not necessarily the order they are added). */
  nextN(): number {
    return this.n++;
  }
  add(r: T): T {
    this.records.push(r);
    this.out?.write(`${JSON.stringify(r)}\n`);
    return r;
  }
  close(): Promise<void> {
    const out = this.out;
    if (!out) return Promise.resolve();
    return new Promise((resolve) => out.end(resolve));
  }
}
