import net from 'node:net';
import { describePortHolder, type HolderContext } from './port-holder';

/**
 * A port the stack needs is taken. The message names the variable that moves it and, when the
 * holder can be seen, the process: a leftover of an earlier start is named with its pid and how
 * to stop it, since moving the port would only leave it running.
 */
export class PortInUseError extends Error {
  constructor(
    readonly port: number,
    readonly variable: string,
    readonly host = '127.0.0.1',
    readonly holder: string | null = null,
  ) {
    super(
      holder
        ? `port ${port} on ${host} is held by ${holder}; or set ${variable} to another port`
        : `port ${port} on ${host} is already in use; set ${variable} to another port`,
    );
  }
}

export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

export async function assertPortFree(port: number, variable: string, host = '127.0.0.1', ctx: HolderContext = {}): Promise<void> {
  if (!(await isPortFree(port, host))) throw new PortInUseError(port, variable, host, describePortHolder(port, ctx));
}

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen({ port: 0, host }, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export function waitForPort(port: number, host = '127.0.0.1', timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const sock = net.connect({ port, host });
      sock.once('connect', () => {
        sock.destroy();
        resolve();
      });
      sock.once('error', () => {
        sock.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing listened on ${host}:${port} within ${timeoutMs} ms`));
        else setTimeout(attempt, 150);
      });
    };
    attempt();
  });
}
