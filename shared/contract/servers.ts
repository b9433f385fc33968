/**
 * Contract entries for servers, accounts, secrets and import.
 *
 * Secret values travel only renderer → main, once, inside `secrets` / `value` fields of a
 * request, and go straight to the OS keychain. No response or event ever carries a secret value:
 * the renderer learns only `hasSecret` flags.
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';
import { AccountView, DisplayName, EntityId, ServerDraft, ServerView, SecretStatus } from '../domain/servers';
import { ConnectFailure } from '../domain/connect-failure';
import { ConnectionStatusView } from './connections';

/** One secret value to store with a server or account: `name` in the keying convention (`env:API_KEY`). */
export const SecretInput = z
  .object({
    name: z.string().min(1).max(300),
    value: z.string().min(1, 'must not be empty').max(16_384),
  })
  .strict();
export type SecretInput = z.infer<typeof SecretInput>;

/** Where an import reads from. */
export const ImportSource = z.enum(['claude-desktop', 'vscode-user', 'vscode-workspace', 'cursor', 'file']);
export type ImportSource = z.infer<typeof ImportSource>;

/** Which file format a config file is in. */
export const ImportFormat = z.enum(['claude-desktop', 'vscode', 'cursor']);
export type ImportFormat = z.infer<typeof ImportFormat>;

/** A value in an imported entry that looks like a secret. Its value is never shown, only why it looks secret. */
export const DetectedSecret = z
  .object({
    /** Stable id within the preview, used to confirm this value. */
    valueId: z.string(),
    field: z.enum(['env', 'header']),
    name: z.string(),
    /** Why it looks secret: "name ends with _TOKEN", "value looks like a GitHub token", … */
    reasons: z.array(z.string()),
    length: z.number().int().nonnegative(),
  })
  .strict();
export type DetectedSecret = z.infer<typeof DetectedSecret>;

/** One server found in a config file. */
export const ImportEntry = z
  .object({
    /** Stable id within the preview. */
    entryId: z.string(),
    /** The key the file used for this server. */
    sourceName: z.string(),
    /** What would be imported (no secret values; detected secrets are shown as `secret: true`). */
    draft: ServerDraft.nullable(),
    /** The exact, untruncated command line that will run (stdio). */
    commandLine: z.string().nullable(),
    detectedSecrets: z.array(DetectedSecret),
    /** Things the person should know: unresolved `${input:...}` references, ignored fields. */
    notes: z.array(z.string()),
    /** Why this entry cannot be imported, or null. */
    problem: z.string().nullable(),
  })
  .strict();
export type ImportEntry = z.infer<typeof ImportEntry>;

/** A parsed config file, held by main under `previewId` so the import uses exactly what was shown. */
export const ImportPreview = z
  .object({
    previewId: z.string(),
    source: ImportSource,
    format: ImportFormat,
    path: z.string(),
    entries: z.array(ImportEntry),
  })
  .strict();
export type ImportPreview = z.infer<typeof ImportPreview>;

/** What to do with one detected secret value: move it to the keychain, keep it as a plain setting, or drop it. */
export const SecretDecision = z
  .object({
    valueId: z.string(),
    action: z.enum(['keychain', 'plain', 'omit']),
  })
  .strict();
export type SecretDecision = z.infer<typeof SecretDecision>;

/**
 * How one server is doing, as one word a list can show: connected; connecting; retrying after a
 * failure (with the next attempt's time); failed (no more automatic attempts: Restart); needs
 * sign-in; not connected (enabled, but disconnected by the person); turned off (not enabled).
 */
export const ServerRunState = z.enum(['connected', 'connecting', 'retrying', 'failed', 'needs_sign_in', 'not_connected', 'turned_off']);
export type ServerRunState = z.infer<typeof ServerRunState>;

/** One account's connection inside a server's overview row. */
export const ServerAccountState = z
  .object({
    accountId: EntityId,
    label: z.string(),
    status: ConnectionStatusView,
    toolCount: z.number().int().nonnegative(),
    /** When the connect under way started (epoch ms), so a long one can show its elapsed time; null when not connecting. */
    connectingSince: z.number().nullable(),
    /** When the next automatic attempt is due (epoch ms), or null when none is scheduled. */
    nextAttemptAt: z.number().nullable(),
  })
  .strict();
export type ServerAccountState = z.infer<typeof ServerAccountState>;

/** One server in the Servers list: enabled switch, state, tools and the account Warden starts it with. */
export const ServerOverviewRow = z
  .object({
    serverId: EntityId,
    name: z.string(),
    transport: z.enum(['stdio', 'http', 'builtin']),
    /** Enabled servers connect when Warden starts, and retry with backoff when that fails. */
    enabled: z.boolean(),
    state: ServerRunState,
    /** Tools listed by its connected accounts. */
    toolCount: z.number().int().nonnegative(),
    /** The server's first account (the list names it; Warden connects on launch every account connected when it last ran, else this one). */
    accountId: EntityId,
    accountLabel: z.string(),
    /** Why it is not connected (sanitized; the server's own words may be part of it), or null. */
    reason: z.string().nullable(),
    /** What kind of failure `reason` is, when the core could tell (the words for it are the renderer's), or null. */
    failure: ConnectFailure.nullable(),
    /**
     * True when Warden will not try again by itself until the person connects it: a program that
     * cannot be started (missing, not allowed to run, no working folder) stays so until they change
     * something, so retrying every few seconds would only repeat the same failure.
     */
    notRetrying: z.boolean(),
    /** Which automatic attempt is next (retrying) or was last (failed), or null. */
    attempt: z.number().int().positive().nullable(),
    /** When the next automatic attempt is due (epoch ms), or null. */
    nextAttemptAt: z.number().nullable(),
    /** When the connect under way started (epoch ms), or null. */
    connectingSince: z.number().nullable(),
    accounts: z.array(ServerAccountState),
  })
  .strict();
export type ServerOverviewRow = z.infer<typeof ServerOverviewRow>;

/** Every server's row plus the one-line summary ("5 of 6 connected — Files failed: command not found"). */
export const ServersOverview = z
  .object({
    servers: z.array(ServerOverviewRow),
    summary: z
      .object({
        total: z.number().int().nonnegative(),
        enabled: z.number().int().nonnegative(),
        connected: z.number().int().nonnegative(),
        /** The summary in words. */
        text: z.string(),
      })
      .strict(),
  })
  .strict();
export type ServersOverview = z.infer<typeof ServersOverview>;

const Empty = z.object({}).strict();
const SecretRef = z.object({ serverId: EntityId, accountId: EntityId, name: z.string().min(1).max(300) }).strict();

/** Channels of the servers, accounts, secrets and import domains. */
export const serversChannels = defineChannels({
  /** Every configured server with its exact command line and per-account hasSecret flags. */
  'servers:list': {
    doc: 'Every configured server (no secret values; hasSecret flags per account).',
    request: Empty,
    response: z
      .object({
        servers: z.array(ServerView),
        /** Why hasSecret flags could not be read (keychain unavailable), or null. */
        keychainProblem: z.string().nullable(),
        /** Why the settings file could not be loaded (names the file and field), or null. Changes are refused until it is fixed. */
        settingsProblem: z.string().nullable(),
      })
      .strict(),
  },
  /** Adds a server with a first account; its secrets go straight to the keychain. */
  'servers:add': {
    doc: 'Adds a server (id chosen by Warden) with a first account; secret values go to the keychain.',
    request: z
      .object({
        definition: ServerDraft,
        accountLabel: DisplayName.optional(),
        secrets: z.array(SecretInput).max(300).optional(),
      })
      .strict(),
    response: ServerView,
  },
  /** Replaces a server's definition (id kept); secrets no longer declared are deleted from the keychain, and a new address (origin + path) ends every account's OAuth sign-in. */
  'servers:edit': {
    doc: "Replaces a server's definition, keeping its id; optional secret values for its first account.",
    request: z
      .object({
        serverId: EntityId,
        definition: ServerDraft,
        accountId: EntityId.optional(),
        secrets: z.array(SecretInput).max(300).optional(),
      })
      .strict(),
    response: ServerView,
  },
  /** Removes a server, its accounts and every keychain entry of it (OAuth tokens are revoked at the authorization server first). */
  'servers:remove': {
    doc: 'Removes a server, its accounts and all of its keychain entries.',
    request: z.object({ serverId: EntityId }).strict(),
    response: z.object({ serverId: EntityId, deletedSecrets: z.number().int().nonnegative() }).strict(),
  },
  /**
   * Asks main to show its native open dialog (starting at the known location of `source`) and
   * previews the file the person chose there. The renderer never names a path: a compromised page
   * must not make Warden read an arbitrary file, or contact a network share.
   */
  'servers:import-preview': {
    doc: 'Shows the native open dialog for a Claude Desktop / VS Code / Cursor config and previews the chosen file (secret-looking values listed, never shown).',
    request: z.object({ source: ImportSource }).strict(),
    response: ImportPreview,
  },
  /** Imports chosen entries of a preview; every detected secret needs an explicit decision. */
  'servers:import': {
    doc: 'Imports chosen entries of a preview; secret-looking values move to the keychain only when confirmed.',
    request: z
      .object({
        previewId: z.string().min(1),
        entryIds: z.array(z.string()).min(1, 'choose at least one server to import'),
        decisions: z.array(SecretDecision).default([]),
      })
      .strict(),
    response: z.object({ servers: z.array(ServerView) }).strict(),
  },
  /** Every server with its enabled switch, state, tool count, backoff, and the summary line. */
  'servers:overview': {
    doc: 'Every server with its enabled switch, connection state, tool count, next automatic attempt, and a one-line summary.',
    request: Empty,
    response: ServersOverview,
  },
  /** Turns a server on (saved; it connects now and on every launch) or off (saved; disconnected now). */
  'servers:set-enabled': {
    doc: 'Turns a server on (connects now and whenever Warden starts, retrying with backoff) or off (disconnects it and keeps it off).',
    request: z.object({ serverId: EntityId, enabled: z.boolean() }).strict(),
    response: ServerOverviewRow,
  },
  /** Disconnects every account of a server, forgets its backoff, and connects it again. */
  'servers:restart': {
    doc: 'Disconnects a server (killing a local process), forgets its retry count and connects it again.',
    request: z.object({ serverId: EntityId }).strict(),
    response: ServerOverviewRow,
  },
  /** Accounts of one server (or all). */
  'accounts:list': {
    doc: 'Accounts (credential profiles), optionally of one server, with hasSecret flags.',
    request: z.object({ serverId: EntityId.optional() }).strict(),
    response: z.object({ accounts: z.array(AccountView) }).strict(),
  },
  /** Adds an account (a credential profile) to a server; bringing env secret values for a local server needs the native confirmation. */
  'accounts:add': {
    doc: "Adds an account to a server; its secret values go to the keychain (for a local server's env variables, only after the person confirms in a native dialog).",
    request: z
      .object({ serverId: EntityId, label: DisplayName, secrets: z.array(SecretInput).max(300).optional() })
      .strict(),
    response: AccountView,
  },
  /** Renames an account (its id, secrets and permissions stay). */
  'accounts:rename': {
    doc: 'Renames an account; id, secrets and permissions stay.',
    request: z.object({ accountId: EntityId, label: DisplayName }).strict(),
    response: AccountView,
  },
  /** Removes an account and its keychain entries (a server keeps at least one account). */
  'accounts:remove': {
    doc: 'Removes an account and its keychain entries; the last account of a server cannot be removed.',
    request: z.object({ accountId: EntityId }).strict(),
    response: z.object({ accountId: EntityId, deletedSecrets: z.number().int().nonnegative() }).strict(),
  },
  /** Switches the active account of a server in a conversation; pending approvals for the other account are invalidated. */
  'accounts:switch': {
    doc: 'Switches the active account of a server in one conversation, or (conversationId null) in every conversation that has no choice of its own (pending approvals for the old one are invalidated).',
    request: z.object({ conversationId: z.string().min(1).max(200).nullable(), serverId: EntityId, accountId: EntityId }).strict(),
    response: z
      .object({ conversationId: z.string().nullable(), serverId: EntityId, accountId: EntityId, previousAccountId: EntityId.nullable() })
      .strict(),
  },
  /** Stores one secret value in the keychain; the response only says it is set. A local server's env secret changes only after a native confirmation. */
  'secrets:set': {
    doc: "Stores one secret in the OS keychain (fails with KEYCHAIN_UNAVAILABLE rather than store it elsewhere); a local server's env variable gets a new value only after the person confirms it in a native dialog.",
    request: SecretRef.extend({ value: z.string().min(1, 'must not be empty').max(16_384) }).strict(),
    response: SecretStatus.extend({ serverId: EntityId, accountId: EntityId }).strict(),
  },
  /** Deletes one secret from the keychain. */
  'secrets:clear': {
    doc: 'Deletes one secret from the OS keychain.',
    request: SecretRef,
    response: SecretStatus.extend({ serverId: EntityId, accountId: EntityId }).strict(),
  },
});

/** Events of the servers and accounts domains (no payload ever carries a secret value). */
export const serversEvents = defineEvents({
  /** The list of servers or accounts changed (added, edited, removed, secret set or cleared). */
  'servers:changed': {
    doc: 'Servers, accounts or secret flags changed; re-read servers:list.',
    payload: z.object({ serverId: EntityId.nullable(), reason: z.string() }).strict(),
  },
  /** Any server's state, enabled switch or backoff changed: the whole overview, coalesced per tick. */
  'servers:overview-changed': {
    doc: 'The servers overview changed (a connection state, an enabled switch, a retry); carries the new overview.',
    payload: ServersOverview,
  },
  /** The active account of a server in a conversation changed. */
  'accounts:switched': {
    doc: 'The active account of a server in a conversation (null: in every conversation without a choice of its own) changed.',
    payload: z
      .object({ conversationId: z.string().nullable(), serverId: EntityId, accountId: EntityId, previousAccountId: EntityId.nullable() })
      .strict(),
  },
});
