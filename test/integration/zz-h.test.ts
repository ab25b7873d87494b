import { startHarness, type Harness } from '../support/harness';
import { startApiStack } from '../support/api-stack';
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.shutdown());
test('nothing', () => expect(h && startApiStack).toBeDefined());
