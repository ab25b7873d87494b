import { startDevServer, type DevServer, type DevServerOptions } from '../src/infra/temporal-dev-server';
import type { Cleanup } from './cleanup';

/**
 * A Temporal dev server (src/infra/temporal-dev-server.ts); with `cleanup`, stopped by it, and its
 * process group killed at exit if the cleanup never ran (a library may end the process first).
 */
export async function startTemporal(cleanup: Cleanup | null, opts: DevServerOptions): Promise<DevServer> {
  const server = await startDevServer(opts);
  if (cleanup) {
    cleanup.add('stop Temporal dev server', () => server.stop(), 12_000);
    cleanup.addLastResort(() => {
      if (server.process.exitCode === null && server.process.signalCode === null) process.kill(-server.process.pid!, 'SIGKILL');
    });
  }
  return server;
}
