/**
 * Four tiers (jest projects), all run by `npm test`; one alone by `npm run test:<tier>`
 * (docs/development.md):
 *   unit         test/unit: no Temporal, no PostgreSQL, nothing started
 *   workflow     test/workflow: the workflows on the time-skipping test server with in-memory
 *                activities, and the recorded histories replayed without a server
 *   integration  test/integration: the real stack (a Temporal dev server and an isolated PostgreSQL database)
 *   soak         the long runs of test/integration (SOAK below) on the same real stack
 * Every tier runs in the guarded environment: what a test file starts is stopped when it ends
 * (test/support/process-guard.ts). A failed run ends with a summary of its failures.
 */
const SOAK = ['faults', 'fuzz-api', 'torture', 'ownership-scale', 'package', 'day-one-start-stop', 'bench-smoke', 'multihost', 'demo'];

const base = {
  testEnvironment: '<rootDir>/test/support/guarded-environment.ts',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
};

const stack = {
  // One module for both stack tiers: jest runs a global setup module once per run, so they share the stack.
  globalSetup: '<rootDir>/test/support/tiers/stack-setup.ts',
  globalTeardown: '<rootDir>/test/support/tiers/stack-teardown.ts',
};

const projects = [
  {
    ...base,
    displayName: 'unit',
    testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    globalSetup: '<rootDir>/test/support/tiers/none-setup.ts',
    globalTeardown: '<rootDir>/test/support/tiers/none-teardown.ts',
  },
  {
    ...base,
    displayName: 'workflow',
    testMatch: ['<rootDir>/test/workflow/**/*.test.ts'],
    globalSetup: '<rootDir>/test/support/tiers/workflow-setup.ts',
    globalTeardown: '<rootDir>/test/support/tiers/workflow-teardown.ts',
  },
  {
    ...base,
    ...stack,
    displayName: 'integration',
    testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
    testPathIgnorePatterns: ['/node_modules/', ...SOAK.map((name) => `/test/integration/${name}\\.test\\.ts$`)],
  },
  {
    ...base,
    ...stack,
    displayName: 'soak',
    testMatch: SOAK.map((name) => `<rootDir>/test/integration/${name}.test.ts`),
  },
];

// `npm run test:<tier>` names its tier here rather than with --selectProjects, which would take
// the file names given after it (`npm run test:unit -- test/unit/x.test.ts`) for project names.
const tiers = (process.env.OD_TEST_TIER ?? '').split(',').filter(Boolean);
const unknown = tiers.filter((t) => !projects.some((p) => p.displayName === t));
if (unknown.length) throw new Error(`OD_TEST_TIER: no tier ${unknown.join(', ')} (tiers: ${projects.map((p) => p.displayName).join(', ')})`);

module.exports = {
  projects: tiers.length ? projects.filter((p) => tiers.includes(p.displayName)) : projects,
  // jest's default output, then the failures last (it runs the default reporters itself).
  reporters: ['<rootDir>/test/support/failure-summary.js'],
  // Longest suites first, the machine-wide ones spaced out (test/support/sequencer.js).
  testSequencer: '<rootDir>/test/support/sequencer.js',
  testTimeout: 120000,
  // Three files at a time on two cores: about half of a run's file time is waiting (outages held,
  // links cut, Temporal's deletion), which a third file fills (jest took 450 s where two took 586 s).
  maxWorkers: 3,
  // A worker is replaced after a file that left its heap over this. Each file's modules stay on the
  // heap of the worker that ran it, so a worker grows to about 1 GB over a run; every process a test
  // then starts (git, the hooks: thousands in the unit tier) pays to fork it, and its collections
  // cost more: the git-heavy unit files took 2-3.5 times the CPU they take in a fresh worker.
  // Integration and unit tiers together: 313 CPU-s and 206 s with it, 341 CPU-s and 231 s without.
  workerIdleMemoryLimit: '300MB',
};
