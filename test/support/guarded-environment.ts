import { TestEnvironment } from 'jest-environment-node';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import { ChildGuard } from './process-guard';
import { cpuOf, recordCpu } from './cpu-account';

/**
 * jest's node environment with a child-process guard (process-guard.ts): its teardown runs after
 * every hook of the file, whatever failed, so what the file started is stopped after the file's
 * own cleanup had its chance, and before the next file runs on this worker.
 */
export default class GuardedEnvironment extends TestEnvironment {
  private readonly guard = new ChildGuard(process.env.OD_TEST_CHILDREN);
  private readonly atExit = () => this.guard.killAllNow();
  private readonly testPath: string;
  private readonly started = { cpu: cpuOf('self'), at: Date.now() };

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    this.testPath = context.testPath;
  }

  override async setup(): Promise<void> {
    await super.setup();
    (this.global as unknown as { __odChildGuard: ChildGuard }).__odChildGuard = this.guard;
    process.on('exit', this.atExit);
  }

  override async teardown(): Promise<void> {
    try {
      const stopped = await this.guard.stopAll();
      if (stopped.length) process.stderr.write(`[guard] stopped what the test file left running: ${stopped.join('; ')}\n`);
    } finally {
      process.off('exit', this.atExit);
      await super.teardown();
      recordCpu({ file: this.testPath, cpu: cpuOf('self') - this.started.cpu, wall: (Date.now() - this.started.at) / 1000, end: Date.now() });
    }
  }
}
