import { OwnershipError } from '../../src/client/errors';
import { PerOwnershipQueue, QUEUE_FULL } from '../../src/client/inflight';

/** The API's per-ownership queue: a burst waits its turn in order; past its bounds the answer is an immediate 503 that sent nothing. */

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

test('at most `limit` run at once per ownership; the rest start in arrival order; other ownerships are not held up', async () => {
  const q = new PerOwnershipQueue(2, 10);
  const started: string[] = [];
  const gates = new Map<string, ReturnType<typeof deferred>>();
  const run = (key: string, name: string) =>
    q.run(key, Date.now() + 5_000, async () => {
      started.push(name);
      const g = deferred();
      gates.set(name, g);
      await g.promise;
      return name;
    });
  const a = ['a1', 'a2', 'a3', 'a4'].map((n) => run('A', n));
  const b = run('B', 'b1');
  await new Promise((r) => setImmediate(r));
  expect(started).toEqual(['a1', 'a2', 'b1']);
  gates.get('a2')!.resolve();
  await a[1];
  await new Promise((r) => setImmediate(r));
  expect(started).toEqual(['a1', 'a2', 'b1', 'a3']);
  gates.get('a1')!.resolve();
  await a[0];
  await new Promise((r) => setImmediate(r));
  expect(started).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
  for (const g of gates.values()) g.resolve();
  expect(await Promise.all([...a, b])).toEqual(['a1', 'a2', 'a3', 'a4', 'b1']);
});

test('a full queue and a wait past its bound are refused at once with unavailable, and the refused call never runs', async () => {
  const q = new PerOwnershipQueue(1, 1);
  const hold = deferred();
  const ran: string[] = [];
  const first = q.run('A', Date.now() + 50, async () => {
    ran.push('first');
    await hold.promise;
  });
  const waiting = q.run('A', Date.now() + 50, async () => void ran.push('waiting'));
  const full = q.run('A', Date.now() + 50, async () => void ran.push('full'));
  await expect(full).rejects.toEqual(new OwnershipError('unavailable', QUEUE_FULL));
  await expect(waiting).rejects.toMatchObject({ code: 'unavailable', message: QUEUE_FULL });
  hold.resolve();
  await first;
  expect(ran).toEqual(['first']);
  // The queue is empty again: the next call runs at once.
  await q.run('A', Date.now() + 50, async () => void ran.push('next'));
  expect(ran).toEqual(['first', 'next']);
});
