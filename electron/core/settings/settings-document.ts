/**
 * The settings document: servers, accounts and preferences, schema-versioned, with migrations.
 *
 * Secret values are never part of it (see shared/domain/servers.ts): secret-marked env vars and
 * headers carry no value, bearer and OAuth tokens live only in the keychain.
 */
import { z } from 'zod';
import { Account, EntityId, ServerDefinition, TimeoutMs } from '../../../shared/domain/servers';
import { ThemePreference } from '../../../shared/contract/app';
import { DefaultToolMode } from '../../../shared/contract/settings';

/** The version this build writes. Bump it together with a migration in `MIGRATIONS`. */
export const SETTINGS_VERSION = 1;

/** Preferences: known fields are validated; other keys are kept so newer features can add theirs. */
export const Preferences = z.looseObject({
  /** How long a pending approval waits before it expires (default 10 min). */
  approvalTimeoutMs: z.number().int().min(10_000).max(86_400_000).optional(),
  /** Default per-call timeout for servers that set none. */
  defaultCallTimeoutMs: TimeoutMs.optional(),
  /**
   * How old a server's tool list may get before it is listed again ahead of the next call, so a
   * tool changed without notice cannot keep its Always Allow (default 10 minutes; 10 s to 1 day).
   */
  relistAfterMs: z.number().int().min(10_000).max(86_400_000).optional(),
  /** How Warden is drawn: following the system (default), or always light or dark. */
  theme: ThemePreference.optional(),
  /** What a tool no rule covers gets: Ask (default) or Disabled (not offered). Never Always Allow. */
  defaultToolMode: DefaultToolMode.optional(),
  /**
   * Servers the person turned off: they do not connect on launch. A list of the ones turned off
   * (not a flag per server) so that settings written before the switch existed keep every server on.
   */
  disabledServers: z.array(EntityId).max(10_000).optional(),
  /**
   * Accounts that were connected when Warden last ran (account ids), so the next start connects
   * each of them again, not only a server's first account. A server with none listed (settings
   * written before the list existed, or never connected) starts with its first account.
   */
  connectedAccounts: z.array(EntityId).max(10_000).optional(),
});
export type Preferences = z.infer<typeof Preferences>;

/** The whole settings file, current version. */
export const SettingsDocument = z
  .object({
    schemaVersion: z.literal(SETTINGS_VERSION),
    servers: z.array(ServerDefinition),
    accounts: z.array(Account),
    preferences: Preferences,
  })
  .strict()
  .superRefine((doc, ctx) => {
    const serverIds = new Set<string>();
    doc.servers.forEach((s, i) => {
      if (serverIds.has(s.id)) ctx.addIssue({ code: 'custom', path: ['servers', i, 'id'], message: `duplicate server id "${s.id}"` });
      serverIds.add(s.id);
    });
    const accountIds = new Set<string>();
    const withAccount = new Set<string>();
    doc.accounts.forEach((a, i) => {
      if (accountIds.has(a.id)) ctx.addIssue({ code: 'custom', path: ['accounts', i, 'id'], message: `duplicate account id "${a.id}"` });
      accountIds.add(a.id);
      if (!serverIds.has(a.serverId)) {
        ctx.addIssue({ code: 'custom', path: ['accounts', i, 'serverId'], message: `no server with id "${a.serverId}"` });
      }
      withAccount.add(a.serverId);
    });
    doc.servers.forEach((s, i) => {
      if (!withAccount.has(s.id)) {
        ctx.addIssue({ code: 'custom', path: ['servers', i, 'id'], message: `server "${s.id}" has no account (every server needs at least one)` });
      }
    });
  });
export type SettingsDocument = z.infer<typeof SettingsDocument>;

/** An empty document at the current version. */
export function emptySettings(): SettingsDocument {
  return { schemaVersion: SETTINGS_VERSION, servers: [], accounts: [], preferences: {} };
}

/** Upgrades a raw document from version `n` to `n + 1`. Pure: takes and returns plain JSON. */
export type Migration = (document: Record<string, unknown>) => Record<string, unknown>;

/**
 * Migrations, keyed by the version they upgrade FROM.
 *
 * 0 → 1: version 0 is a document without `schemaVersion` (a brand-new empty file, or a
 * pre-release file that held just `servers`). Servers without accounts get a "Default" account
 * whose id is derived from the server id, so repeated migration of the same file is stable.
 */
export const MIGRATIONS: Readonly<Record<number, Migration>> = {
  0: (doc) => {
    const servers = Array.isArray(doc.servers) ? doc.servers : [];
    const accounts = Array.isArray(doc.accounts) ? [...doc.accounts] : [];
    for (const s of servers) {
      const id = typeof s === 'object' && s !== null ? (s as { id?: unknown }).id : undefined;
      if (typeof id !== 'string') continue;
      if (!accounts.some((a) => typeof a === 'object' && a !== null && (a as { serverId?: unknown }).serverId === id)) {
        accounts.push({ id: `${id}-default`.slice(0, 80), serverId: id, label: 'Default' });
      }
    }
    const preferences = typeof doc.preferences === 'object' && doc.preferences !== null ? doc.preferences : {};
    return { ...doc, schemaVersion: 1, servers, accounts, preferences };
  },
};
