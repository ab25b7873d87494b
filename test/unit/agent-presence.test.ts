import { agentPresent, BEACON_STALE_MS } from '../../src/infra/beacon';

/** The one rule /healthz's host list and the API's host presence judge a host agent by. */
describe('whether a host agent is there', () => {
  const never = () => Promise.reject(new Error('the pollers must not be asked when a beacon exists'));

  test('a beacon decides when there is one: fresh is there, stale is not, the pollers are never asked', async () => {
    await expect(agentPresent(0, never)).resolves.toBe(true);
    await expect(agentPresent(BEACON_STALE_MS - 1, never)).resolves.toBe(true);
    await expect(agentPresent(BEACON_STALE_MS, never)).resolves.toBe(false);
    await expect(agentPresent(10 * BEACON_STALE_MS, never)).resolves.toBe(false);
  });

  test('with no beacon at all, Temporal pollers of its queue are all there is', async () => {
    await expect(agentPresent(null, () => Promise.resolve(true))).resolves.toBe(true);
    await expect(agentPresent(null, () => Promise.resolve(false))).resolves.toBe(false);
  });
});
