/**
 * Contract entries for the Settings view: the preferences the core acts on (approval expiry, the
 * default mode for tools no rule covers), what Settings shows about the app (keychain, activity
 * log, data folder, versions), and checking the activity log on demand.
 *
 * Nothing here can make Warden ask less without the person's native confirmation: the default
 * mode is Ask or Disabled, never Always Allow, and going from Disabled back to Ask is confirmed in
 * main's dialog like lifting any other Disabled.
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';
import { LedgerLineProblem } from '../domain/ledger';

/** The shortest and longest approval expiry the settings accept (1 minute to 24 hours). */
export const APPROVAL_EXPIRY_MIN_MS = 60_000;
export const APPROVAL_EXPIRY_MAX_MS = 86_400_000;
/** The approval expiry when the person has not chosen one: 10 minutes. */
export const DEFAULT_APPROVAL_EXPIRY_MS = 10 * 60_000;

/** The default for a tool with no rule: Ask, or Disabled (not offered). Never Always Allow. */
export const DefaultToolMode = z.enum(['ask', 'disabled']);
export type DefaultToolMode = z.infer<typeof DefaultToolMode>;

/** An approval expiry in milliseconds, within the accepted range. */
export const ApprovalExpiryMs = z
  .number()
  .int()
  .min(APPROVAL_EXPIRY_MIN_MS, 'approval expiry: at least 1 minute')
  .max(APPROVAL_EXPIRY_MAX_MS, 'approval expiry: at most 24 hours');

/** Everything the Settings view shows, as the core sees it now. */
export const SettingsView = z.object({
  approvals: z.object({
    /** How long a new approval waits before it expires. */
    expiryMs: z.number().int().positive(),
    defaultExpiryMs: z.number().int().positive(),
  }),
  permissions: z.object({ defaultToolMode: DefaultToolMode }),
  keychain: z.object({
    available: z.boolean(),
    /** In words: where secrets are kept, or why the keychain cannot be used. */
    detail: z.string(),
  }),
  ledger: z.object({
    /** `ledger`: the hash-chained log on disk; `memory`: nothing is kept (tests, the test host). */
    kind: z.enum(['ledger', 'memory']),
    /** The folder of the log on disk, when there is one. */
    dir: z.string().nullable(),
    records: z.number().int().nonnegative(),
    safeMode: z.boolean(),
  }),
  /** Where Warden keeps its files, when the host told the core. */
  dataFolder: z.string().nullable(),
  /** The settings file and why it could not be read, if so. */
  settingsFile: z.object({ path: z.string(), problem: z.string().nullable() }),
  about: z.object({
    version: z.string(),
    platform: z.string(),
    arch: z.string(),
    /** Runtime versions: node and v8 always; electron and chrome inside the app. */
    versions: z.record(z.string(), z.string()),
  }),
});
export type SettingsView = z.infer<typeof SettingsView>;

/** A change to one or more preferences; keys left out stay as they are. */
export const SettingsChange = z
  .object({
    approvalExpiryMs: ApprovalExpiryMs.optional(),
    defaultToolMode: DefaultToolMode.optional(),
  })
  .strict()
  .refine((c) => Object.keys(c).length > 0, 'name at least one setting to change (approvalExpiryMs, defaultToolMode)');
export type SettingsChange = z.infer<typeof SettingsChange>;

/** What checking the activity log found, with the finding in words. */
export const LedgerCheck = z.object({
  /** `intact`, `damaged`, or `not-on-disk` (a memory journal has nothing to check). */
  outcome: z.enum(['intact', 'damaged', 'not-on-disk']),
  /** One or two sentences a person can act on. */
  summary: z.string(),
  records: z.number().int().nonnegative(),
  segments: z.number().int().nonnegative(),
  firstBroken: z
    .object({ segment: z.string(), offset: z.number().int().nonnegative(), seq: z.number().int().optional(), problem: LedgerLineProblem })
    .nullable(),
  checkedAt: z.number(),
  durationMs: z.number().nonnegative(),
});
export type LedgerCheck = z.infer<typeof LedgerCheck>;

export const settingsChannels = defineChannels({
  /** The preferences and the facts Settings shows. */
  'settings:get': {
    doc: 'Preferences (approval expiry, default mode for new tools) and app facts (keychain, activity log, data folder, versions).',
    request: z.object({}).strict(),
    response: SettingsView,
  },
  /** Changes preferences; a change that lifts the Disabled default is confirmed in the native dialog first. */
  'settings:set': {
    doc: 'Changes approval expiry and/or the default mode for new tools; lifting a Disabled default needs the native confirmation.',
    request: SettingsChange,
    response: SettingsView,
  },
  /** Checks the whole activity log (checksums, hash chain, sequence) off the main thread. */
  'ledger:verify': {
    doc: 'Verifies the activity log on disk (checksums, hash chain, sequence) in a worker thread; the result in words.',
    request: z.object({}).strict(),
    response: LedgerCheck,
  },
});

export const settingsEvents = defineEvents({
  /** Pushed after a preference changed (from any window or the menu). */
  'settings:changed': { doc: 'A preference changed; re-read settings:get.', payload: z.object({ keys: z.array(z.string()) }) },
});
