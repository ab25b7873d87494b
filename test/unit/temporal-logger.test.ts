import { Writable } from 'node:stream';
import { createLogger, temporalLogger } from '../../src/infra/logger';

/** The Temporal SDK's log through ours: levels mapped, the host agent's by-design warning demoted. */
function capture(level: string) {
  const lines: Array<{ level: number; msg: string; component?: string }> = [];
  const dest = new Writable({
    write: (chunk, _enc, cb) => (
      lines.push(
        ...String(chunk)
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ),
      cb()
    ),
  });
  return { lines, log: createLogger(level, dest) };
}

const INFO = 30;
const WARN = 40;
const ERROR = 50;

test("at info (a normal start) the host agent's 'No workflows registered' is not printed, and no SDK info chatter is", () => {
  const { lines, log } = capture('info');
  const sdk = temporalLogger(log);
  sdk.warn('No workflows registered, not polling for workflow tasks', { sdkComponent: 'worker', taskQueue: 'ownership-host-h1' });
  sdk.info('Worker state changed', { state: 'RUNNING' });
  sdk.log('WARN', 'No workflows registered, not polling for workflow tasks');
  expect(lines).toEqual([]);
});

test('at debug the demoted message is still there, at debug; other warnings and errors keep their level and fields', () => {
  const { lines, log } = capture('debug');
  const sdk = temporalLogger(log);
  sdk.warn('No workflows registered, not polling for workflow tasks', { taskQueue: 'q' });
  sdk.warn('Workflow task failed', { workflowId: 'w' });
  sdk.error('Worker failed', { err: 'x' });
  sdk.info('Worker state changed');
  expect(lines.map((l) => [l.level, l.msg])).toEqual([
    [20, 'No workflows registered, not polling for workflow tasks'],
    [WARN, 'Workflow task failed'],
    [ERROR, 'Worker failed'],
    [20, 'Worker state changed'],
  ]);
  expect(lines[1]).toMatchObject({ workflowId: 'w' });
  expect(lines.every((l) => l.level < INFO || l.msg !== 'No workflows registered, not polling for workflow tasks')).toBe(true);
});
