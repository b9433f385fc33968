/**
 * What the ledger reports about itself: recovery findings (torn tails, chain breaks), safe mode,
 * and verification results. Shared so the renderer can show exactly what the core found.
 */
import { z } from 'zod';

/** Why a stored line was rejected. */
export const LedgerLineProblem = z.enum(['torn', 'unparseable', 'checksum', 'chain', 'sequence']);
export type LedgerLineProblem = z.infer<typeof LedgerLineProblem>;

/** A torn or corrupt tail that recovery dropped (never guessed at). */
export const LedgerTornTail = z.object({
  segment: z.string(),
  offset: z.number().int().nonnegative().describe('byte offset in the segment where the dropped bytes began'),
  droppedBytes: z.number().int().nonnegative(),
  problem: LedgerLineProblem,
});
export type LedgerTornTail = z.infer<typeof LedgerTornTail>;

/** A bad record followed by valid ones: corruption or tampering in the middle of the log. */
export const LedgerChainBreak = z.object({
  /** Stable id (`segment@offset`) that an acknowledgement refers to. */
  id: z.string(),
  segment: z.string(),
  offset: z.number().int().nonnegative(),
  length: z.number().int().nonnegative(),
  problem: LedgerLineProblem,
  seq: z.number().int().optional(),
  acknowledged: z.boolean(),
  /** Where the untouched copy of the segment was preserved for inspection. */
  preservedCopy: z.string().nullable(),
});
export type LedgerChainBreak = z.infer<typeof LedgerChainBreak>;

/** What recovery found when the ledger was opened. */
export const LedgerRecoveryReport = z.object({
  segments: z.array(z.string()),
  records: z.number().int().nonnegative(),
  tornTail: LedgerTornTail.nullable(),
  breaks: z.array(LedgerChainBreak),
  /** true while any break is unacknowledged: every tool is held at ask. */
  safeMode: z.boolean(),
  removedTempFiles: z.array(z.string()),
  durationMs: z.number().nonnegative(),
});
export type LedgerRecoveryReport = z.infer<typeof LedgerRecoveryReport>;

/** Live status of the ledger, for the Activity view and the app frame. */
export const LedgerStatus = z.object({
  dir: z.string(),
  records: z.number().int().nonnegative(),
  segments: z.array(z.string()),
  safeMode: z.boolean(),
  recovery: LedgerRecoveryReport,
});
export type LedgerStatus = z.infer<typeof LedgerStatus>;

/** Result of `verify(dir)`: the first broken record if any. */
export const LedgerVerifyResult = z.object({
  ok: z.boolean(),
  segments: z.array(z.string()),
  records: z.number().int().nonnegative(),
  firstBroken: z
    .object({
      segment: z.string(),
      offset: z.number().int().nonnegative(),
      problem: LedgerLineProblem,
      seq: z.number().int().optional(),
      excerpt: z.string(),
    })
    .nullable(),
});
export type LedgerVerifyResult = z.infer<typeof LedgerVerifyResult>;

/** Record type written when a person acknowledges the chain breaks found by recovery. */
export const SAFE_MODE_ACK_TYPE = 'ledger.safe_mode_acknowledged';
