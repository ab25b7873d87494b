// @ts-check
'use strict';
const path = require('node:path');
const { DefaultReporter, SummaryReporter, VerboseReporter } = require('@jest/reporters');

/**
 * The last lines of a failed run name each failing test (file › test name) with the first lines
 * of its error, so a CI log read from its end says what broke without scrolling back through
 * every suite's output. Plain JavaScript: jest loads reporters without transforming them.
 *
 * It stands in for jest's `default` reporters (the per-file lines and the totals), which it runs
 * itself: named beside them, it would print before the totals, which jest always adds last.
 */
const ERROR_LINES = 6;

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/** @param {string | undefined | null} text */
function firstLines(text) {
  const lines = String(text ?? '')
    .replace(ANSI, '')
    .split('\n')
    .map((l) => l.trimEnd())
    // The stack is where, not what: the message and the expectation's diff come first.
    .filter((l) => l.trim() !== '' && !/^\s+at /.test(l))
    // A diff's brackets say nothing on their own: its lines with values do.
    .filter((l) => !/^\s*(Object \{|Array \[|[{}[\]],?)\s*$/.test(l));
  return lines.slice(0, ERROR_LINES).map((l) => `    ${l.trim()}`);
}

/** Each hook jest calls, with the older name a reporter may implement instead (as jest's dispatcher falls back). */
const HOOKS = [['onRunStart'], ['onTestFileStart', 'onTestStart'], ['onTestCaseStart'], ['onTestCaseResult'], ['onTestFileResult', 'onTestResult']];

class FailureSummary {
  /** @param {import('@jest/types').Config.GlobalConfig} globalConfig */
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    /** @type {Array<Record<string, any>>} */
    this.inner = [globalConfig.verbose ? new VerboseReporter(globalConfig) : new DefaultReporter(globalConfig), new SummaryReporter(globalConfig)];
    for (const [hook, older] of HOOKS) {
      /** @type {Record<string, any>} */ (this)[hook] = async (/** @type {unknown[]} */ ...args) => {
        for (const r of this.inner) {
          const fn = typeof r[hook] === 'function' ? r[hook] : older && typeof r[older] === 'function' ? r[older] : null;
          if (fn) await fn.apply(r, args);
        }
      };
    }
  }

  getLastError() {
    for (const r of this.inner) {
      const err = typeof r.getLastError === 'function' ? r.getLastError() : undefined;
      if (err) return err;
    }
    return undefined;
  }

  /**
   * @param {Set<unknown>} contexts
   * @param {import('@jest/test-result').AggregatedResult} results
   */
  async onRunComplete(contexts, results) {
    for (const r of this.inner) if (typeof r.onRunComplete === 'function') await r.onRunComplete(contexts, results);
    /** @type {string[]} */
    const out = [];
    for (const file of results.testResults) {
      const rel = path.relative(this.rootDir, file.testFilePath);
      const failed = file.testResults.filter((t) => t.status === 'failed');
      for (const t of failed) out.push(`  ${rel} › ${[...t.ancestorTitles, t.title].join(' › ')}`, ...firstLines(t.failureMessages[0]));
      // A file that failed outside any test: it did not load, or a hook (beforeAll/afterAll) threw.
      if (failed.length === 0 && (file.testExecError || file.failureMessage)) {
        out.push(`  ${rel} › (the file failed outside its tests)`, ...firstLines(file.testExecError?.message ?? file.failureMessage));
      }
    }
    if (out.length === 0) return;
    const count = results.numFailedTests + results.numRuntimeErrorTestSuites;
    process.stderr.write(`\nFailed (${count}):\n${out.join('\n')}\n`);
  }
}

module.exports = FailureSummary;
