import { z } from 'zod';
import { PathString } from '../domain/identity';

/** The landing scan's input and report (src/landings/scan.ts runs it; docs/operations.md#landings-without-a-receipt). */

export const SCAN_METHODS = ['merge', 'fast_forward', 'cherry_pick_x', 'patch_id', 'squash'] as const;
export type ScanMethod = (typeof SCAN_METHODS)[number];

/** Stable codes for a commit the scan recorded no landing for (docs/reason-codes.md#landing-scan). */
export const SCAN_REASONS = {
  landing_ambiguous: 'more than one ownership (or more than one of its commits) matches; none is recorded',
  landing_no_candidate: 'no ownership of this repository matches',
} as const;
export type ScanReason = keyof typeof SCAN_REASONS;

// Control characters are what these screen out.
// eslint-disable-next-line no-control-regex
const BRANCH_ARG = /^[^\s~^:?*[\\\x00-\x1f\x7f\uD800-\uDFFF]{1,255}$/u;
// eslint-disable-next-line no-control-regex
const SINCE_ARG = /^[^\s~^:?*[\\\x00-\x1f\x7f\uD800-\uDFFF][^\s:?*[\\\x00-\x1f\x7f\uD800-\uDFFF]{0,254}$/u;

export const ScanInputSchema = z.strictObject({
  repo: PathString,
  // Handed to git as arguments: storable characters only (a NUL was answered path_not_found, git never ran), counted as JSON Schema counts them.
  branch: z.string().regex(BRANCH_ARG).meta({ minLength: 1, maxLength: 255 }).default('main'),
  since: z.string().regex(SINCE_ARG).meta({ minLength: 1, maxLength: 255 }).optional(),
  /** at most this many first-parent commits, newest ones (bounded work per call) */
  limit: z.number().int().positive().max(20_000).default(2000),
});
export type ScanInput = z.input<typeof ScanInputSchema>;

export const ScanResultSchema = z.strictObject({
  commit: z.string(),
  status: z.enum(['receipt', 'inferred', 'already_inferred', 'none']),
  method: z.enum(SCAN_METHODS).nullable(),
  ownershipId: z.string().nullable(),
  reason: z.enum(['landing_ambiguous', 'landing_no_candidate']).nullable(),
  candidates: z.array(z.string()),
  commits: z.array(z.string()),
});
export type ScanResult = z.infer<typeof ScanResultSchema>;

export const ScanReportSchema = z.strictObject({
  repoRoot: z.string(),
  branch: z.string(),
  scanned: z.number().int(),
  inferred: z.number().int(),
  ambiguous: z.number().int(),
  results: z.array(ScanResultSchema),
});
export type ScanReport = z.infer<typeof ScanReportSchema>;
