import { z } from 'zod';
import type { PayloadCodec } from '@temporalio/common';
import { ERROR_RESPONSES, SECURITY, type App } from '../http';

/**
 * The Temporal codec server protocol (POST <endpoint>/decode), for the Temporal UI ("codec
 * server" in its settings) and `temporal workflow show --codec-endpoint <api>/codec --codec-auth
 * 'Bearer <admin token>'`: payloads encrypted by the service's codec (src/infra/payload-codec.ts)
 * come back readable, to admins only. Registered only when OD_PAYLOAD_KEY_FILE is set. There is no
 * /encode: nobody outside the service writes its payloads.
 */
const Base64 = z
  .string()
  .max(4_000_000)
  .regex(/^[A-Za-z0-9+/=]*$/);
const WirePayload = z.object({ metadata: z.record(z.string().max(256), Base64).optional(), data: Base64.optional() });
const PayloadsSchema = z.object({ payloads: z.array(WirePayload).max(1_000) });
type WirePayload = z.infer<typeof WirePayload>;

const fromWire = (p: WirePayload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const toWire = (p: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }): WirePayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

export function registerCodecRoutes(app: App, codec: PayloadCodec): void {
  app.post(
    '/codec/decode',
    {
      config: { operation: 'decodePayloads' },
      schema: {
        summary: 'Decode Temporal payloads encrypted by this service (codec server protocol; admin)',
        tags: ['system'],
        security: SECURITY,
        body: PayloadsSchema,
        response: { 200: PayloadsSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => ({ payloads: (await codec.decode(req.body.payloads.map(fromWire))).map(toWire) }),
  );
}
