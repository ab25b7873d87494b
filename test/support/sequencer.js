// @ts-check
'use strict';
const { readFileSync } = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The order the suites start in, planned for the run's workers: longest first, so no long suite
 * starts last and leaves one worker busy while the other idles; and the suites that take the
 * whole machine (they hold test/support/heavy-lock.ts) spaced out, so a worker never sits
 * blocked on that lock while the other runs one of them.
 *
 * A suite's expected time is jest's own record of its last run here (its cache) when there is
 * one, else test/support/suite-seconds.json (a fresh clone has no cache: CI always starts there),
 * else a few seconds. docs/development.md says how to refresh the table.
 */
const ROOT = path.resolve(__dirname, '../..');
/** @type {Record<string, number>} */
const TABLE = require('./suite-seconds.json');
const UNKNOWN_MS = 3_000;

/** @typedef {import('@jest/test-result').Test} Test */

class PlannedSequencer extends Sequencer {
  /** @param {{ globalConfig: { maxWorkers: number } }} options */
  constructor(options) {
    super(options);
    this.workers = Math.max(1, options.globalConfig.maxWorkers);
  }

  /** @param {Test} test */
  expectedMs(test) {
    const cached = this.time(test);
    if (typeof cached === 'number' && cached > 0) return cached;
    const seconds = TABLE[path.relative(ROOT, test.path).split(path.sep).join('/')];
    return typeof seconds === 'number' ? seconds * 1000 : UNKNOWN_MS;
  }

  /** @param {Array<Test>} tests */
  sort(tests) {
    const failedFirst = tests.filter((t) => this.hasFailed(t));
    const rest = tests.filter((t) => !this.hasFailed(t));
    return [...failedFirst, ...plan(rest, this.workers, (t) => this.expectedMs(t), holdsHeavyLock)];
  }
}

/** @param {Test} test */
function holdsHeavyLock(test) {
  try {
    return readFileSync(test.path, 'utf8').includes('acquireHeavyLock(');
  } catch {
    return false;
  }
}

/**
 * List scheduling on `workers` simulated workers: the next free worker takes the longest suite
 * that can start at once (a heavy one only while no heavy one runs); when only heavy ones are left
 * and one is running, it waits for it. The order of taking is the order jest is given.
 * @template T
 * @param {T[]} items
 * @param {number} workers
 * @param {(t: T) => number} ms
 * @param {(t: T) => boolean} heavy
 * @returns {T[]}
 */
function plan(items, workers, ms, heavy) {
  const left = [...items].sort((a, b) => ms(b) - ms(a));
  const heavyOf = new Map(left.map((t) => [t, heavy(t)]));
  /** @type {number[]} */
  const freeAt = Array.from({ length: workers }, () => 0);
  let heavyUntil = 0;
  /** @type {T[]} */
  const order = [];
  while (left.length > 0) {
    const w = freeAt.indexOf(Math.min(...freeAt));
    const now = freeAt[w];
    let i = left.findIndex((t) => !heavyOf.get(t) || heavyUntil <= now);
    let start = now;
    if (i < 0) {
      i = 0;
      start = heavyUntil;
    }
    const [t] = left.splice(i, 1);
    freeAt[w] = start + ms(t);
    if (heavyOf.get(t)) heavyUntil = freeAt[w];
    order.push(t);
  }
  return order;
}

module.exports = PlannedSequencer;
module.exports.plan = plan;
