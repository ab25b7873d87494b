import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { OwnershipRecord } from '../domain/projection';
import { isHoldTenure, MAX_HOLDS, TENURE_HASH_WORDS, type HoldTenure, type Tenure } from '../domain/tenure';
import type { TenureHashes } from '../git/record';

/**
 * The tenure hash of a projection carried in the host activity's input, so a host agent needs no
 * service key (docs/guarantees.md#out-of-reach: the key off agent hosts). The control plane, which
 * holds the key, computes `tenureHash` for the record's current tenure (src/keys/tenure.ts
 * tenureHashWords: a SHA-256 per key of the tenure's secret, the very words the projection holds,
 * never the secret) and passes it beside the record; the host writes it as it is. The tenure it
 * names is checked against the record's, so a hash carried for another tenure is never written.
 *
 * Backward compatible: an input without it (a workflow from before) is answered as before, from
 * the host's own key when it has one; a keyless host refuses it, retryably
 * (`tenure_hash_missing`), until the caller carries it.
 *
 * `holds`: each live child hold's words under the same tenure (src/keys/tenure.ts
 * holdTenureHashWords), carried the same way, so a keyless host writes the children's standing
 * too. A hold the record names and the input does not carry is written without standing (its
 * child refused at the gate, never the owner's projection held back for it); a keyed host derives it.
 */
const Words = z.string().regex(TENURE_HASH_WORDS, 'lowercase hex SHA-256 digests, space separated');
export const CarriedHoldSchema = z.strictObject({
  holdId: z.string().min(1),
  executionSessionId: z.string().min(1),
  tenureHash: Words,
});
export const CarriedTenureSchema = z.strictObject({
  ownershipId: z.string().min(1),
  epoch: z.number().int().nonnegative(),
  executionSessionId: z.string().min(1),
  tenureHash: Words,
  holds: z.array(CarriedHoldSchema).max(MAX_HOLDS).optional(),
});
export type CarriedTenure = z.infer<typeof CarriedTenureSchema>;

const sameTenure = (a: Tenure, b: Tenure) => a.ownershipId === b.ownershipId && a.epoch === b.epoch && a.executionSessionId === b.executionSessionId;

/**
 * The tenure hashes one projection write uses: the carried one for its own tenure, else the host's
 * key (`derive`, null on a keyless host). Refuses a carried value that does not parse, and any
 * other tenure's hash (a programming error upstream, never guessed at).
 */
export function tenureHashesFor(record: OwnershipRecord, carried: unknown, derive: TenureHashes | null): TenureHashes {
  if (carried !== undefined && carried !== null) {
    const parsed = CarriedTenureSchema.safeParse(carried);
    if (!parsed.success) throw ApplicationFailure.create({ type: 'invalid_input', message: 'the carried tenure hash does not parse', nonRetryable: true });
    const c = parsed.data;
    return (t) => {
      if (isHoldTenure(t)) return carriedHold(record, c, t, derive);
      if (!sameTenure(t, c))
        throw ApplicationFailure.create({
          type: 'invalid_input',
          message: `the carried tenure hash is for another tenure than record seq ${record.seq}'s`,
          nonRetryable: true,
        });
      return c.tenureHash;
    };
  }
  if (derive !== null) return derive;
  return () => {
    throw ApplicationFailure.create({
      type: 'tenure_hash_missing',
      message: 'this host agent holds no service key and the projection carried no tenure hash: the control plane must send it',
      nonRetryable: false,
    });
  };
}

/**
 * A child hold's words: the carried ones for that hold and child under the carried tenure; else
 * the host's key; else none (the hold is written without standing). A hold of another ownership
 * or epoch than the carried tenure's is a programming error upstream, refused as the owner's is.
 */
function carriedHold(record: OwnershipRecord, c: CarriedTenure, t: HoldTenure, derive: TenureHashes | null): string | null {
  if (t.ownershipId !== c.ownershipId || t.epoch !== c.epoch)
    throw ApplicationFailure.create({
      type: 'invalid_input',
      message: `the carried tenure hash is for another tenure than record seq ${record.seq}'s hold ${t.holdId}`,
      nonRetryable: true,
    });
  const hold = c.holds?.find((h) => h.holdId === t.holdId && h.executionSessionId === t.executionSessionId);
  if (hold !== undefined) return hold.tenureHash;
  return derive === null ? null : derive(t);
}
