/**
 * Server and account management: the behaviour behind the servers:*, accounts:*
 * and secrets:* channels. (Why this file is longer than 450 lines: one class on purpose; every change
 * touches settings and the keychain together, and keeping their write-then-roll-back order in one
 * place is what keeps it whole.)
 *
 * Two stores, one rule — nothing half-written. Settings (servers, accounts) go through the
 * SettingsRepository; secret values go only to the keychain. Every change is validated in full
 * before either store is touched, keychain writes happen first and are rolled back if anything
 * later fails, so a failed keychain write leaves the settings exactly as they were.
 */
import type { ServerEndpointChanged } from '../../../shared/domain/journal-events';
import {
  SavedServerDefinition,
  ServerDefinition,
  displayCommandLine,
  parseSecretKey,
  settableSecretNames,
  secretKey,
  secretKeyPrefix,
  type Account,
  type LogLevel,
  type AccountView,
  type ServerDraft,
  type ServerView,
} from '../../../shared/domain/servers';
import { WardenError } from '../../../shared/result';
import { describeIssues } from '../dispatch';
import { systemClock, type Clock, type Journal } from '../ports';
import type { ListableSecretStore } from '../secrets/keytar-secret-store';
import { endpointHash, endsOAuthSignIn, newEntityId } from './identity';
import { SettingsDocument } from './settings-document';
import type { SettingsRepository } from './settings-repository';

/** One secret value to store: `name` in the keying convention (`env:API_KEY`, `header:x-api-key`, `bearer`). */
export interface SecretValue {
  name: string;
  value: string;
}

/** What changed, for the `servers:changed` event and for the connection layer. */
export interface ServerChange {
  serverId: string | null;
  reason: 'added' | 'edited' | 'removed' | 'account-added' | 'account-renamed' | 'account-removed' | 'secret-set' | 'secret-cleared' | 'imported';
}

/** What the server service needs: the settings repository and the keychain, plus optional clock, ids and journal. */
export interface ServerServiceDeps {
  settings: SettingsRepository;
  secrets: ListableSecretStore;
  clock?: Clock;
  /** Id generator (slug + random suffix by default). */
  newId?: (name: string) => string;
  /** If given, `server.endpoint-changed` is appended to it (account switches are journaled by the gate). */
  journal?: Journal;
}

type Listener<T> = (event: T) => void;

/** Servers, accounts and their secrets: every change validated in full, keychain first, settings last, all or nothing. */
export class ServerService {
  private readonly settings: SettingsRepository;
  private readonly secrets: ListableSecretStore;
  private readonly clock: Clock;
  private readonly newId: (name: string) => string;
  private readonly changeListeners = new Set<Listener<ServerChange>>();
  private readonly endpointListeners = new Set<Listener<ServerEndpointChanged>>();
  private readonly oauthDiscardListeners = new Set<(server: ServerDefinition, accountIds: readonly string[]) => Promise<void>>();

  constructor(private readonly deps: ServerServiceDeps) {
    this.settings = deps.settings;
    this.secrets = deps.secrets;
    this.clock = deps.clock ?? systemClock;
    this.newId = deps.newId ?? ((name) => newEntityId(name));
  }

  // ---- subscriptions ---------------------------------------------------------------------

  /** Subscribes to server/account/secret changes (the `servers:changed` event). */
  onChange(listener: Listener<ServerChange>): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Subscribes to endpoint changes (what a server runs/contacts changed): grants pinned to the old hash fall back to ask. */
  onEndpointChanged(listener: Listener<ServerEndpointChanged>): () => void {
    this.endpointListeners.add(listener);
    return () => this.endpointListeners.delete(listener);
  }

  /**
   * Subscribes to the end of a server's OAuth sign-in (the server or an account is removed, or its
   * endpoint or sign-in method changes). Awaited before the keychain entries are deleted, while the
   * tokens can still be revoked; the OAuth service connects here.
   */
  onOAuthDiscarded(listener: (server: ServerDefinition, accountIds: readonly string[]) => Promise<void>): () => void {
    this.oauthDiscardListeners.add(listener);
    return () => this.oauthDiscardListeners.delete(listener);
  }

  // ---- reads -------------------------------------------------------------------------------

  /** The stored definition of one server, or undefined. */
  getServer(serverId: string): ServerDefinition | undefined {
    return this.settings.get().servers.find((s) => s.id === serverId);
  }

  /** Every stored definition (the connection layer reads these). */
  definitions(): readonly ServerDefinition[] {
    return this.settings.get().servers;
  }

  /** Accounts of a server, in creation order. */
  accountsOf(serverId: string): readonly Account[] {
    return this.settings.get().accounts.filter((a) => a.serverId === serverId);
  }

  /** Every server as the renderer may see it, with hasSecret flags for the secrets each declares. */
  async listServers(): Promise<{ servers: ServerView[]; keychainProblem: string | null; settingsProblem: string | null }> {
    const doc = this.settings.get();
    const { keys, problem } = await this.presentKeys(doc.servers);
    return { servers: doc.servers.map((s) => this.view(s, keys)), keychainProblem: problem, settingsProblem: this.settings.problem?.message ?? null };
  }

  /** Accounts (optionally of one server) with hasSecret flags. */
  async listAccounts(serverId?: string): Promise<AccountView[]> {
    if (serverId !== undefined) this.requireServer(serverId);
    const servers = this.settings.get().servers.filter((s) => serverId === undefined || s.id === serverId);
    const { keys } = await this.presentKeys(servers);
    return servers.flatMap((s) => this.view(s, keys).accounts);
  }

  /** One server's view. */
  async serverView(serverId: string): Promise<ServerView> {
    const def = this.requireServer(serverId);
    const { keys } = await this.presentKeys([def]);
    return this.view(def, keys);
  }

  // ---- servers -----------------------------------------------------------------------------

  /**
   * Adds a server with a first account. Secrets are stored before the settings are written and
   * removed again if that write fails, so no half-added server is left behind either way.
   */
  async addServer(input: { definition: ServerDraft; accountLabel?: string; secrets?: SecretValue[] }): Promise<ServerView> {
    const id = this.newId(input.definition.name);
    const def = parseDefinition({ ...input.definition, id }, 'definition');
    const account: Account = { id: this.newId(input.accountLabel ?? 'default'), serverId: id, label: input.accountLabel ?? 'Default' };
    const writes = this.secretWrites(def, account.id, input.secrets ?? []);
    this.dryRun((d) => {
      d.servers.push(def);
      d.accounts.push(account);
    });
    await this.transact(writes, [], () =>
      this.settings.update((d) => {
        d.servers.push(def);
        d.accounts.push(account);
      }),
    );
    this.emit({ serverId: id, reason: 'added' });
    return this.serverView(id);
  }

  /**
   * Replaces a server's definition, keeping its id. Secrets the new definition no longer declares
   * are deleted from the keychain (for every account); an endpoint change is announced so grants
   * pinned to the old endpoint fall back to ask, and ends the OAuth sign-in of every account
   * (revoked through the OAuth listeners, then deleted).
   */
  async editServer(input: { serverId: string; definition: ServerDraft; accountId?: string; secrets?: SecretValue[] }): Promise<ServerView> {
    const old = this.requireServer(input.serverId);
    const def = parseDefinition({ ...input.definition, id: old.id }, 'definition');
    const accounts = this.accountsOf(old.id);
    const accountId = input.accountId ?? accounts[0]!.id;
    if (!accounts.some((a) => a.id === accountId)) throw new WardenError('NOT_FOUND', `accountId: no account "${accountId}" on server "${old.id}"`);
    const writes = this.secretWrites(def, accountId, input.secrets ?? []);
    const stillDeclared = new Set(settableSecretNames(def));
    // A new endpoint (or no more OAuth) ends the sign-in: every account's OAuth material goes,
    // the client secret included, except what this very edit stores.
    const endsSignIn = endsOAuthSignIn(old, def);
    const keepOauth = def.transport === 'http' && def.auth.kind === 'oauth' && !endsSignIn;
    const written = new Set(writes.map((w) => w.key));
    const existing = await this.keysOrThrow(secretKeyPrefix(old.id));
    const orphans = existing.filter((k) => {
      const p = parseSecretKey(k);
      if (!p || written.has(k)) return false;
      if (p.name.startsWith('oauth')) return !keepOauth;
      return !stillDeclared.has(p.name);
    });
    this.dryRun((d) => replaceServer(d, def));
    if (endsSignIn) await this.discardOAuth(old, accounts.map((a) => a.id));
    await this.transact(writes, orphans, () => this.settings.update((d) => replaceServer(d, def)));
    const before = endpointHash(old);
    const after = endpointHash(def);
    if (before !== after) {
      const event: ServerEndpointChanged = { serverId: def.id, oldEndpointHash: before, newEndpointHash: after, at: this.clock.now() };
      await this.deps.journal?.append([{ type: 'server.endpoint-changed', payload: { ...event } }]);
      for (const l of this.endpointListeners) l(event);
    }
    this.emit({ serverId: def.id, reason: 'edited' });
    return this.serverView(def.id);
  }

  /**
   * Removes a server, its accounts and every keychain entry under its prefix (including OAuth
   * tokens). Keychain entries go first: if the keychain cannot delete them, the server stays
   * configured so the secrets are not orphaned out of sight.
   */
  async removeServer(serverId: string): Promise<{ serverId: string; deletedSecrets: number }> {
    const def = this.requireServer(serverId);
    const keys = await this.keysOrThrow(secretKeyPrefix(serverId));
    await this.discardOAuth(def, this.accountsOf(serverId).map((a) => a.id));
    for (const k of keys) await this.secrets.delete(k);
    this.settings.update((d) => {
      d.servers = d.servers.filter((s) => s.id !== serverId);
      d.accounts = d.accounts.filter((a) => a.serverId !== serverId);
    });
    this.emit({ serverId, reason: 'removed' });
    return { serverId, deletedSecrets: keys.length };
  }

  // ---- accounts ----------------------------------------------------------------------------

  /** Adds an account (credential profile) to a server, with optional secret values. */
  async addAccount(input: { serverId: string; label: string; secrets?: SecretValue[] }): Promise<AccountView> {
    const def = this.requireServer(input.serverId);
    const account: Account = { id: this.newId(input.label), serverId: def.id, label: input.label };
    const writes = this.secretWrites(def, account.id, input.secrets ?? []);
    this.dryRun((d) => void d.accounts.push(account));
    await this.transact(writes, [], () => this.settings.update((d) => void d.accounts.push(account)));
    this.emit({ serverId: def.id, reason: 'account-added' });
    return this.accountView(account.id);
  }

  /** Renames an account; its id, secrets and permissions stay. */
  async renameAccount(accountId: string, label: string): Promise<AccountView> {
    this.requireAccount(accountId);
    this.settings.update((d) => {
      const a = d.accounts.find((x) => x.id === accountId)!;
      a.label = label;
    });
    this.emit({ serverId: this.requireAccount(accountId).serverId, reason: 'account-renamed' });
    return this.accountView(accountId);
  }

  /** The log level the person chose for an account's server messages, if any (the default is `info`). */
  logLevelOf(accountId: string): LogLevel | undefined {
    return this.settings.get().accounts.find((a) => a.id === accountId)?.logLevel;
  }

  /** Keeps the log level chosen for an account, so it is asked for again after a restart. */
  setLogLevel(accountId: string, level: LogLevel): void {
    this.requireAccount(accountId);
    this.settings.update((d) => {
      const a = d.accounts.find((x) => x.id === accountId)!;
      a.logLevel = level;
    });
  }

  /** Removes an account and its keychain entries; a server always keeps at least one account. */
  async removeAccount(accountId: string): Promise<{ accountId: string; deletedSecrets: number }> {
    const account = this.requireAccount(accountId);
    if (this.accountsOf(account.serverId).length <= 1) {
      throw new WardenError('CONFLICT', `accountId: "${accountId}" is the only account of server "${account.serverId}"; remove the server instead`);
    }
    const keys = await this.keysOrThrow(secretKeyPrefix(account.serverId, accountId));
    await this.discardOAuth(this.requireServer(account.serverId), [accountId]);
    for (const k of keys) await this.secrets.delete(k);
    this.settings.update((d) => {
      d.accounts = d.accounts.filter((a) => a.id !== accountId);
    });
    this.emit({ serverId: account.serverId, reason: 'account-removed' });
    return { accountId, deletedSecrets: keys.length };
  }

  // ---- secrets -----------------------------------------------------------------------------

  /** Stores one declared secret of an account in the keychain. The answer only says it is set. */
  async setSecret(input: { serverId: string; accountId: string; name: string; value: string }): Promise<{ serverId: string; accountId: string; name: string; hasSecret: true }> {
    const def = this.requireServer(input.serverId);
    this.requireAccountOf(def.id, input.accountId);
    const [write] = this.secretWrites(def, input.accountId, [{ name: input.name, value: input.value }], 'name');
    await this.secrets.set(write!.key, write!.value);
    this.emit({ serverId: def.id, reason: 'secret-set' });
    return { serverId: def.id, accountId: input.accountId, name: input.name, hasSecret: true };
  }

  /** Deletes one secret of an account from the keychain. */
  async clearSecret(input: { serverId: string; accountId: string; name: string }): Promise<{ serverId: string; accountId: string; name: string; hasSecret: false }> {
    const def = this.requireServer(input.serverId);
    this.requireAccountOf(def.id, input.accountId);
    await this.secrets.delete(secretKey(def.id, input.accountId, input.name));
    this.emit({ serverId: def.id, reason: 'secret-cleared' });
    return { serverId: def.id, accountId: input.accountId, name: input.name, hasSecret: false };
  }

  /**
   * The secret values one (server, account) connection needs, read from the keychain, by name.
   * For the connection layer (env vars, headers, bearer token); never sent to the renderer.
   */
  async resolveSecrets(serverId: string, accountId: string): Promise<Map<string, string>> {
    const def = this.requireServer(serverId);
    this.requireAccountOf(serverId, accountId);
    const out = new Map<string, string>();
    for (const name of settableSecretNames(def)) {
      const v = await this.secrets.get(secretKey(serverId, accountId, name));
      if (v !== null) out.set(name, v);
    }
    return out;
  }

  // ---- import support ------------------------------------------------------------------------

  /**
   * Adds several servers (each with a Default account and its secrets) as one change: every
   * secret is stored first; if any keychain write or the settings write fails, all secrets
   * written are removed and no server is added. Used by the importer.
   */
  async addServersAtomically(items: Array<{ definition: ServerDraft; secrets: SecretValue[] }>): Promise<ServerView[]> {
    const prepared = items.map((item, i) => {
      const id = this.newId(item.definition.name);
      const def = parseDefinition({ ...item.definition, id }, `servers.${i}`);
      const account: Account = { id: this.newId('default'), serverId: id, label: 'Default' };
      return { def, account, writes: this.secretWrites(def, account.id, item.secrets) };
    });
    const apply = (d: { servers: ServerDefinition[]; accounts: Account[] }) => {
      for (const p of prepared) {
        d.servers.push(p.def);
        d.accounts.push(p.account);
      }
    };
    this.dryRun(apply);
    await this.transact(prepared.flatMap((p) => p.writes), [], () => this.settings.update(apply));
    this.emit({ serverId: null, reason: 'imported' });
    return Promise.all(prepared.map((p) => this.serverView(p.def.id)));
  }

  // ---- internals -----------------------------------------------------------------------------

  private view(def: ServerDefinition, keys: ReadonlySet<string>): ServerView {
    const names = settableSecretNames(def);
    return {
      definition: def,
      commandLine: def.transport === 'stdio' ? displayCommandLine(def.command, def.args) : null,
      accounts: this.accountsOf(def.id).map((a) => ({
        ...a,
        secrets: names.map((name) => ({ name, hasSecret: keys.has(secretKey(def.id, a.id, name)) })),
      })),
    };
  }

  private async accountView(accountId: string): Promise<AccountView> {
    const a = this.requireAccount(accountId);
    return (await this.serverView(a.serverId)).accounts.find((x) => x.id === accountId)!;
  }

  /**
   * Which of the secrets these servers declare are set. Reads exactly those keys, in parallel:
   * a keychain listing costs time proportional to everything stored (OAuth tokens of every
   * account included), and a server that declares no secret costs no keychain call at all.
   */
  private async presentKeys(defs: readonly ServerDefinition[]): Promise<{ keys: Set<string>; problem: string | null }> {
    const wanted = defs.flatMap((def) => {
      const names = settableSecretNames(def);
      return this.accountsOf(def.id).flatMap((a) => names.map((n) => secretKey(def.id, a.id, n)));
    });
    try {
      const values = await Promise.all(wanted.map((k) => this.secrets.get(k)));
      return { keys: new Set(wanted.filter((_, i) => values[i] !== null)), problem: null };
    } catch (error) {
      if (error instanceof WardenError && error.code === 'KEYCHAIN_UNAVAILABLE') return { keys: new Set(), problem: error.message };
      throw error;
    }
  }

  private keysOrThrow(prefix: string): Promise<string[]> {
    return this.secrets.keys(prefix);
  }

  /** Checks secret inputs against what the definition declares; returns keychain writes. */
  private secretWrites(def: ServerDefinition, accountId: string, secrets: SecretValue[], field = 'secrets'): Array<{ key: string; value: string }> {
    const declared = settableSecretNames(def);
    const seen = new Set<string>();
    return secrets.map((s, i) => {
      const where = field === 'secrets' ? `secrets.${i}.name` : field;
      if (!declared.includes(s.name)) {
        throw new WardenError(
          'VALIDATION_FAILED',
          `${where}: "${s.name}" is not a secret server "${def.name}" declares (declared: ${declared.join(', ') || 'none'}; mark the env var or header as secret first)`,
        );
      }
      if (seen.has(s.name)) throw new WardenError('VALIDATION_FAILED', `${where}: "${s.name}" given twice`);
      seen.add(s.name);
      if (typeof s.value !== 'string' || s.value.length === 0) {
        throw new WardenError('VALIDATION_FAILED', `${field === 'secrets' ? `secrets.${i}.value` : 'value'}: must not be empty`);
      }
      return { key: secretKey(def.id, accountId, s.name), value: s.value };
    });
  }

  /** Validates a settings change without writing it, so bad input fails before the keychain is touched. */
  private dryRun(change: (d: { servers: ServerDefinition[]; accounts: Account[] }) => void): void {
    if (this.settings.problem) throw new WardenError('CONFLICT', `${this.settings.problem.message} Changes are refused until it is fixed or reset.`);
    const draft = structuredClone(this.settings.get()) as SettingsDocument;
    change(draft);
    const r = SettingsDocument.safeParse(draft);
    if (!r.success) throw new WardenError('VALIDATION_FAILED', describeIssues(r.error.issues));
  }

  /**
   * Keychain writes and deletes, then the settings commit; on any failure the keychain is put
   * back as it was (previous values restored, new ones removed) and the error is rethrown.
   */
  private async transact(writes: Array<{ key: string; value: string }>, deletes: string[], commit: () => void): Promise<void> {
    const undo: Array<() => Promise<unknown>> = [];
    try {
      for (const w of writes) {
        const previous = await this.secrets.get(w.key);
        await this.secrets.set(w.key, w.value);
        undo.push(() => (previous === null ? this.secrets.delete(w.key) : this.secrets.set(w.key, previous)));
      }
      for (const k of deletes) {
        const previous = await this.secrets.get(k);
        await this.secrets.delete(k);
        if (previous !== null) undo.push(() => this.secrets.set(k, previous));
      }
      commit();
    } catch (error) {
      for (const u of undo.reverse()) await u().catch(() => undefined);
      throw error;
    }
  }

  /** Tells OAuth listeners a sign-in ends (they revoke and forget); a listener's failure never blocks the deletion. */
  private async discardOAuth(server: ServerDefinition, accountIds: readonly string[]): Promise<void> {
    if (server.transport !== 'http' || server.auth.kind !== 'oauth') return;
    for (const l of this.oauthDiscardListeners) await l(server, accountIds).catch(() => undefined);
  }

  private emit(change: ServerChange): void {
    for (const l of this.changeListeners) l(change);
  }

  private requireServer(serverId: string): ServerDefinition {
    const def = this.getServer(serverId);
    if (!def) throw new WardenError('NOT_FOUND', `serverId: no server "${serverId}"`);
    return def;
  }

  private requireAccount(accountId: string): Account {
    const a = this.settings.get().accounts.find((x) => x.id === accountId);
    if (!a) throw new WardenError('NOT_FOUND', `accountId: no account "${accountId}"`);
    return a;
  }

  private requireAccountOf(serverId: string, accountId: string): Account {
    const a = this.requireAccount(accountId);
    if (a.serverId !== serverId) throw new WardenError('VALIDATION_FAILED', `accountId: account "${accountId}" belongs to server "${a.serverId}", not "${serverId}"`);
    return a;
  }
}

function parseDefinition(value: unknown, field: string): ServerDefinition {
  const r = SavedServerDefinition.safeParse(value);
  if (!r.success) {
    throw new WardenError('VALIDATION_FAILED', describeIssues(r.error.issues.map((i) => ({ ...i, path: [field, ...i.path] }))));
  }
  return r.data;
}

function replaceServer(d: { servers: ServerDefinition[] }, def: ServerDefinition): void {
  d.servers = d.servers.map((s) => (s.id === def.id ? def : s));
}
