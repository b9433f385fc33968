/**
 * Contract entries for the core itself: health and status shown in the app frame.
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';

/** What the app frame shows about the running core. */
export const CoreStatus = z.object({
  version: z.string(),
  startedAt: z.string().describe('ISO time the core started'),
  platform: z.string(),
  journal: z.object({
    kind: z.enum(['memory', 'ledger']),
    records: z.number().int().nonnegative(),
    indexing: z.number().int().min(0).max(100).optional(),
    acknowledgedDamage: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('how many places of damage a person has acknowledged (now or at an earlier start): the log is no longer whole even though safe mode is over; absent when there are none'),
  }),
  servers: z.object({ configured: z.number().int().nonnegative(), connected: z.number().int().nonnegative() }),
  pendingApprovals: z.number().int().nonnegative(),
  safeMode: z
    .boolean()
    .describe(
      "true while a ledger problem no person has acknowledged stands: a record that fails its checksum, its seal (HMAC with the ledger's key from the keychain) or the hash chain; a plain record after sealed ones; the ledger no longer reaching, or no longer holding, the last record anchored in the keychain (newest records removed, blanked or rewritten, or an older copy put back); or the ledger's key missing or unreadable. Records written after the anchor's last update (about a second) and records from before the ledger had a key show damage only. Every tool is held at ask.",
    ),
});
export type CoreStatus = z.infer<typeof CoreStatus>;

export const coreChannels = defineChannels({
  /** Current status of the core, for the app frame. */
  'core:status': {
    doc: 'Current status of the core (version, journal, servers, pending approvals).',
    request: z.object({}).strict(),
    response: CoreStatus,
  },
  /** Round-trip check used by the shell and the e2e test. */
  'core:ping': {
    doc: 'Echoes a short nonce back, proving a request reached the real core.',
    request: z.object({ nonce: z.string().min(1).max(200) }).strict(),
    response: z.object({ nonce: z.string(), receivedAt: z.string() }),
  },
});

export const coreEvents = defineEvents({
  /** Pushed whenever any field of the core status changes. */
  'core:status-changed': { doc: 'The core status changed.', payload: CoreStatus },
});
