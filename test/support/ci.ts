/**
 * Whether this run is CI's (the `CI` variable set, as every CI service sets it; `false` or `0` is
 * not). A test that cannot run here for want of a tool skips with a printed reason on a
 * developer's machine, and fails in CI: a check CI never runs is a silent pass.
 */
export function inCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CI?.trim().toLowerCase();
  return v !== undefined && v !== '' && v !== 'false' && v !== '0';
}

/**
 * Declares `name` as a test that cannot run here because `why`: in CI a failing test saying so,
 * elsewhere a skipped one whose name says why (and the reason printed).
 */
export function cannotRunHere(name: string, why: string): void {
  if (inCI()) {
    test(name, () => {
      throw new Error(`${name}: cannot run (${why}), and CI is set: CI must run it, so it fails rather than skip`);
    });
  } else {
    process.stderr.write(`${name}: not run here: ${why}\n`);
    test.skip(`${name}: not run here: ${why}`, () => undefined);
  }
}
