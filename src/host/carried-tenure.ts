import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { OwnershipRecord } from '../domain/projection';
import { TENURE_HASH_WORDS, type Tenure } from '../domain/tenure';
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
 */
export const CarriedTenureSchema = z.strictObject({
  ownershipId: z.string().min(1),
  epoch: z.number().int().nonnegative(),
  executionSessionId: z.string().min(1),
  tenureHash: z.string().regex(TENURE_HASH_WORDS, 'lowercase hex SHA-256 digests, space separated'),
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
