/**
 * Servers that start themselves: the enabled switch, connecting every enabled server when Warden
 * starts (all at once, not one after another), retrying a server whose connect failed with a
 * growing delay whose next attempt time is part of the data, Restart, and the overview the
 * Servers list and its summary line are drawn from.
 *
 * The switch is stored as the list of servers turned OFF (preferences.disabledServers), so a
 * settings file written before the switch existed keeps every server on.
 *
 * Which accounts start is remembered the same way (preferences.connectedAccounts): an account that
 * connects is added, one the person disconnects (or signs out of) is removed, so the next start
 * connects every account that was connected when Warden last ran, not only the first. A server with
 * none remembered starts with its first account. Turning a server off or restarting it keeps the
 * list: turning it on again brings back the same accounts.
 *
 * Retrying here covers connects this module started (launch, turning on, Restart, its own
 * retries). A connection that drops after it was up retries on its own (connection.ts); this
 * module only turns that connection's `retryInMs` into an absolute time. A connect the person
 * started by hand that fails stays failed (Restart is one click away); a server that needs a
 * sign-in is never retried (only the person can sign in), nor is a program that cannot be started
 * (see `cannotStart`: only the person can install it or fix the command).
 */
import type { ServerDefinition } from '../../../shared/domain/servers';
import type { ServerOverviewRow, ServerRunState, ServersOverview } from '../../../shared/contract/servers';
import { WardenError } from '../../../shared/result';
import type { CoreEvents } from '../events';
import type { Clock } from '../ports';
import type { ConnectionManager } from './connection-manager';
import type { ConnectionStatus } from './connection';
import type { ServerCatalog, ServerSwitches } from './ports';
import { sanitizeForDisplay } from '../text/sanitize';
import type { ConnectFailure } from '../../../shared/domain/connect-failure';
import { cannotStart } from './connect-failure';

/** How automatic attempts after a failed connect are spaced. */
export interface AutostartPolicy {
  /** Delay before the first retry (default 2 s); doubles per attempt up to `maxDelayMs`. */
  baseDelayMs: number;
  /** Longest delay between attempts (default 60 s). */
  maxDelayMs: number;
  /** Retries after the first failed connect before giving up until Restart (default 6). */
  maxAttempts: number;
}

const DEFAULT_POLICY: AutostartPolicy = { baseDelayMs: 2_000, maxDelayMs: 60_000, maxAttempts: 6 };

export interface AutostartDeps {
  manager: ConnectionManager;
  servers: Pick<ServerCatalog, 'definitions' | 'getServer' | 'accountsOf' | 'onChange'>;
  switches: ServerSwitches;
  events: CoreEvents;
  clock: Clock;
  policy?: Partial<AutostartPolicy>;
}

/** A retry this module scheduled for one server. */
interface Retry {
  /** The attempt that runs when the timer fires (1 = the first retry). */
  attempt: number;
  at: number;
  reason: string;
  failure: ConnectFailure | null;
  timer: NodeJS.Timeout;
}

/** A server this module gave up on (until Restart, turning it on again, or a successful connect). */
interface GaveUp {
  attempts: number;
  reason: string;
  /** Not retried at all: the program could not be started (see `cannotStart`). */
  notRetried: boolean;
}

export class ServerAutostart {
  private readonly policy: AutostartPolicy;
  private readonly retries = new Map<string, Retry>();
  private readonly gaveUp = new Map<string, GaveUp>();
  /** Per server: bumped by every start, stop and restart, so a late answer of an older connect changes nothing. */
  private readonly generations = new Map<string, number>();
  /** `serverId\0accountId` → when its connect under way started. */
  private readonly connectingSince = new Map<string, number>();
  /** `serverId\0accountId` → when the connection's own reconnect (after a drop) is due. */
  private readonly reconnectAt = new Map<string, number>();
  private readonly offs: Array<() => void> = [];
  /** Servers this module is disconnecting itself (off, Restart): their 'disconnected' is not the person's. */
  private readonly stopping = new Set<string>();
  private closed = false;
  /** Set once the enabled servers were launched: from then on a newly added server starts at once. */
  private launched = false;
  private queued = false;
  private lastSent = '';

  constructor(private readonly deps: AutostartDeps) {
    this.policy = { ...DEFAULT_POLICY, ...deps.policy };
    this.offs.push(
      deps.manager.on('status', (serverId, accountId, status) => this.onStatus(serverId, accountId, status)),
      // A re-listing changes the tool count the list shows.
      deps.manager.on('toolsChanged', () => this.queueOverview()),
      deps.servers.onChange((change) => {
        if (change.reason === 'removed' && change.serverId !== null) this.forget(change.serverId);
        if ((change.reason === 'removed' || change.reason === 'account-removed') && change.serverId !== null) this.forgetMissingAccounts();
        // A server saved once Warden is running starts like those Warden started with: a person who
        // just added one expects it to connect, not to wait for a click.
        if (change.reason === 'added' && change.serverId !== null && this.launched && this.isEnabled(change.serverId)) void this.start(change.serverId);
        this.queueOverview();
      }),
      deps.switches.onChange(() => this.queueOverview()),
    );
  }

  /** Whether a server is on (everything not listed as turned off). */
  isEnabled(serverId: string): boolean {
    return !this.deps.switches.disabled().includes(serverId);
  }

  /**
   * Connects every enabled server at once (each account connected when Warden last ran, else the
   * first) and resolves when each has connected or failed (a failed one has its first retry
   * scheduled by then).
   */
  async launch(): Promise<void> {
    this.launched = true;
    const enabled = this.deps.servers.definitions().filter((d) => this.isEnabled(d.id));
    await Promise.all(enabled.map((d) => this.start(d.id)));
  }

  /** Turns a server on or off, saved in settings; on connects it now, off disconnects every account. */
  async setEnabled(serverId: string, enabled: boolean): Promise<ServerOverviewRow> {
    this.requireServer(serverId);
    const off = new Set(this.deps.switches.disabled());
    if (enabled) off.delete(serverId);
    else off.add(serverId);
    this.deps.switches.setDisabled([...off]);
    if (enabled) {
      void this.start(serverId);
    } else {
      this.stop(serverId);
      await this.disconnectKeepingAccounts(serverId);
    }
    return this.row(this.requireServer(serverId));
  }

  /** Disconnects every account of a server, forgets its retries, and connects it again. */
  async restart(serverId: string): Promise<ServerOverviewRow> {
    this.requireServer(serverId);
    this.stop(serverId);
    await this.disconnectKeepingAccounts(serverId);
    void this.start(serverId);
    return this.row(this.requireServer(serverId));
  }

  /** Disconnects every account of a server for off or Restart, keeping which accounts start next time. */
  private async disconnectKeepingAccounts(serverId: string): Promise<void> {
    this.stopping.add(serverId);
    try {
      await this.deps.manager.disconnect(serverId);
    } finally {
      this.stopping.delete(serverId);
    }
  }

  /** The accounts a start connects: those connected when Warden last ran, else the first. */
  private accountsToStart(serverId: string): string[] {
    const accounts = this.deps.servers.accountsOf(serverId);
    const remembered = new Set(this.deps.switches.connectedAccounts());
    const chosen = accounts.filter((a) => remembered.has(a.id)).map((a) => a.id);
    if (chosen.length > 0) return chosen;
    return accounts[0] ? [accounts[0].id] : [];
  }

  /** Connects a server's accounts (see `accountsToStart`), scheduling a retry if one fails. */
  private async start(serverId: string, attempt = 0): Promise<void> {
    if (this.closed) return;
    if (attempt === 0) this.stop(serverId);
    const generation = this.bump(serverId);
    const accountIds = this.accountsToStart(serverId);
    if (accountIds.length === 0) return;
    const statuses = await Promise.all(
      accountIds.map(async (accountId): Promise<ConnectionStatus> => {
        try {
          return await this.deps.manager.connect(serverId, accountId);
        } catch (error) {
          return { state: 'error', reason: error instanceof Error ? error.message : String(error) };
        }
      }),
    );
    // The server or account went away meanwhile, or Warden is shutting down.
    if (this.generations.get(serverId) !== generation || this.closed) return;
    const failed = statuses.find((s): s is Extract<ConnectionStatus, { state: 'error' }> => s.state === 'error' && s.retryInMs === undefined);
    if (statuses.every((s) => s.state === 'connected')) {
      this.gaveUp.delete(serverId);
    } else if (failed && cannotStart(failed.failure)) {
      this.gaveUp.set(serverId, { attempts: attempt, reason: failed.reason, notRetried: true });
    } else if (failed && this.isEnabled(serverId)) {
      this.scheduleRetry(serverId, attempt + 1, failed.reason, failed.failure ?? null);
    }
    this.queueOverview();
  }

  private scheduleRetry(serverId: string, attempt: number, reason: string, failure: ConnectFailure | null): void {
    if (attempt > this.policy.maxAttempts) {
      this.gaveUp.set(serverId, { attempts: attempt - 1, reason, notRetried: false });
      return;
    }
    const delay = Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** (attempt - 1));
    const timer = setTimeout(() => {
      if (this.retries.get(serverId)?.timer !== timer) return;
      this.retries.delete(serverId);
      void this.start(serverId, attempt);
    }, delay);
    timer.unref?.();
    this.retries.set(serverId, { attempt, at: this.deps.clock.now() + delay, reason, failure, timer });
  }

  /** Cancels a scheduled retry and forgets a give-up; a connect under way is left to finish (its answer is ignored). */
  private stop(serverId: string): void {
    const retry = this.retries.get(serverId);
    if (retry) clearTimeout(retry.timer);
    this.retries.delete(serverId);
    this.gaveUp.delete(serverId);
    this.bump(serverId);
    this.queueOverview();
  }

  private bump(serverId: string): number {
    const next = (this.generations.get(serverId) ?? 0) + 1;
    this.generations.set(serverId, next);
    return next;
  }

  /** Drops remembered accounts that no longer exist (a removed account or server). */
  private forgetMissingAccounts(): void {
    const remembered = this.deps.switches.connectedAccounts();
    if (remembered.length === 0 || !this.deps.switches.canSave()) return;
    const live = new Set(this.deps.servers.definitions().flatMap((d) => this.deps.servers.accountsOf(d.id).map((a) => a.id)));
    const kept = remembered.filter((id) => live.has(id));
    if (kept.length !== remembered.length) this.saveConnected(kept);
  }

  /** Adds or removes one account in the list the next start connects (saved only when it changes). */
  private rememberConnected(accountId: string, connected: boolean): void {
    const remembered = this.deps.switches.connectedAccounts();
    if (remembered.includes(accountId) === connected || !this.deps.switches.canSave()) return;
    this.saveConnected(connected ? [...remembered, accountId] : remembered.filter((id) => id !== accountId));
  }

  private saveConnected(accountIds: string[]): void {
    try {
      this.deps.switches.setConnectedAccounts(accountIds);
    } catch (error) {
      // Which accounts start next time is a convenience: a settings file that cannot be written is
      // reported by the next change the person makes, and must not break the connection itself.
      console.error('remembering which accounts to connect at the next start failed', error);
    }
  }

  private forget(serverId: string): void {
    this.stop(serverId);
    this.generations.delete(serverId);
    const off = this.deps.switches.disabled();
    if (off.includes(serverId) && this.deps.switches.canSave()) {
      this.deps.switches.setDisabled(off.filter((id) => id !== serverId));
    }
  }

  private onStatus(serverId: string, accountId: string, status: ConnectionStatus): void {
    const key = `${serverId}\u0000${accountId}`;
    if (status.state === 'connecting') {
      if (!this.connectingSince.has(key)) this.connectingSince.set(key, this.deps.clock.now());
    } else {
      this.connectingSince.delete(key);
    }
    if (status.state === 'error' && status.retryInMs !== undefined) this.reconnectAt.set(key, this.deps.clock.now() + status.retryInMs);
    else if (status.state !== 'connecting') this.reconnectAt.delete(key);
    // The person disconnected it: no automatic attempt follows.
    if (status.state === 'disconnected' && this.retries.has(serverId) && !this.stopping.has(serverId)) this.stop(serverId);
    if (status.state === 'connected') this.gaveUp.delete(serverId);
    if (!this.closed && this.deps.servers.getServer(serverId) !== undefined) {
      if (status.state === 'connected') this.rememberConnected(accountId, true);
      else if (status.state === 'disconnected' && !this.stopping.has(serverId)) this.rememberConnected(accountId, false);
    }
    this.queueOverview();
  }

  /** The overview of every server (the `servers:overview` answer and event). */
  overview(): ServersOverview {
    const rows = this.deps.servers.definitions().map((d) => this.row(d));
    return { servers: rows, summary: summarize(rows) };
  }

  private row(definition: ServerDefinition): ServerOverviewRow {
    const serverId = definition.id;
    const accounts = this.deps.servers.accountsOf(serverId);
    const snapshots = new Map(this.deps.manager.snapshot(serverId).map((s) => [s.accountId, s]));
    const accountStates = accounts.map((a) => {
      const snap = snapshots.get(a.id);
      const key = `${serverId}\u0000${a.id}`;
      const status = snap ? statusView(snap.status) : ({ state: 'disconnected' } as const);
      return {
        accountId: a.id,
        label: a.label,
        status,
        toolCount: snap?.toolCount ?? 0,
        connectingSince: status.state === 'connecting' ? (this.connectingSince.get(key) ?? null) : null,
        nextAttemptAt: status.state === 'error' && status.retryInMs !== undefined ? (this.reconnectAt.get(key) ?? null) : null,
      };
    });
    const primary = accountStates[0];
    const enabled = this.isEnabled(serverId);
    const retry = this.retries.get(serverId);
    const gaveUp = this.gaveUp.get(serverId);
    const connected = accountStates.filter((a) => a.status.state === 'connected');
    const connecting = accountStates.find((a) => a.status.state === 'connecting');
    const reconnecting = accountStates.find((a) => a.nextAttemptAt !== null);
    const failing = accountStates.find((a) => a.status.state === 'error' || a.status.state === 'auth_required');
    let state: ServerRunState;
    let reason: string | null = null;
    let failure: ConnectFailure | null = null;
    let notRetrying = false;
    let attempt: number | null = null;
    let nextAttemptAt: number | null = null;
    if (connected.length > 0) state = 'connected';
    else if (connecting) {
      state = 'connecting';
      if (connecting.status.state === 'connecting' && connecting.status.attempt > 1) attempt = connecting.status.attempt;
    } else if (retry) {
      state = 'retrying';
      reason = retry.reason;
      failure = retry.failure;
      attempt = retry.attempt;
      nextAttemptAt = retry.at;
    } else if (reconnecting && reconnecting.status.state === 'error') {
      state = 'retrying';
      reason = reconnecting.status.reason;
      failure = reconnecting.status.failure ?? null;
      attempt = reconnecting.status.attempt ?? null;
      nextAttemptAt = reconnecting.nextAttemptAt;
    } else if (failing && failing.status.state === 'auth_required') {
      state = 'needs_sign_in';
      reason = failing.status.reason;
    } else if (failing && failing.status.state === 'error') {
      state = 'failed';
      reason = failing.status.reason;
      failure = failing.status.failure ?? null;
      // A program that cannot be started is never retried by itself, whoever started the connect.
      notRetrying = gaveUp?.notRetried === true || cannotStart(failure);
      attempt = gaveUp && !gaveUp.notRetried ? gaveUp.attempts + 1 : null;
    } else state = enabled ? 'not_connected' : 'turned_off';
    return {
      serverId,
      name: definition.name,
      transport: definition.transport,
      enabled,
      state,
      toolCount: connected.reduce((n, a) => n + a.toolCount, 0),
      accountId: primary?.accountId ?? `${serverId}-default`.slice(0, 80),
      accountLabel: primary?.label ?? '',
      reason,
      failure,
      notRetrying,
      attempt,
      nextAttemptAt,
      connectingSince: connecting?.connectingSince ?? null,
      accounts: accountStates,
    };
  }

  /** Pushes `servers:overview-changed` once per tick, and only when something differs. */
  private queueOverview(): void {
    if (this.queued || this.closed) return;
    this.queued = true;
    queueMicrotask(() => {
      this.queued = false;
      if (this.closed) return;
      const next = this.overview();
      const text = JSON.stringify(next);
      if (text === this.lastSent) return;
      this.lastSent = text;
      this.deps.events.emit('servers:overview-changed', next);
    });
  }

  private requireServer(serverId: string): ServerDefinition {
    const d = this.deps.servers.getServer(serverId);
    if (!d) throw new WardenError('NOT_FOUND', `serverId: no server "${serverId}"`);
    return d;
  }

  /** Cancels every retry; connections themselves are closed by the manager. */
  close(): void {
    this.closed = true;
    for (const r of this.retries.values()) clearTimeout(r.timer);
    this.retries.clear();
    for (const off of this.offs) off();
  }
}

/** A status with the server-influenced reason sanitized (the same rule as the connections:* channels). */
function statusView(status: ConnectionStatus): ConnectionStatus {
  if (status.state === 'error' || status.state === 'auth_required') return { ...status, reason: sanitizeForDisplay(status.reason) };
  return status;
}

/**
 * The summary line: "5 of 6 connected — Files failed, not retrying". Counts enabled servers; names
 * every one that is not connected and what Warden does about it. Why it failed is said once, on
 * the server's own row just below (in the renderer's words for the failure), not again here.
 */
export function summarize(rows: readonly ServerOverviewRow[]): ServersOverview['summary'] {
  const enabled = rows.filter((r) => r.enabled || r.state === 'connected');
  const connected = enabled.filter((r) => r.state === 'connected').length;
  const off = rows.length - enabled.length;
  const problems = enabled
    .filter((r) => r.state !== 'connected')
    .map((r) => {
      switch (r.state) {
        case 'connecting':
          return `${r.name} connecting`;
        case 'retrying':
          return `${r.name} failed, retrying`;
        case 'failed':
          return r.notRetrying ? `${r.name} failed, not retrying` : `${r.name} failed`;
        case 'needs_sign_in':
          return `${r.name} needs you to sign in`;
        default:
          return `${r.name} not connected`;
      }
    });
  let text: string;
  if (rows.length === 0) text = 'No servers yet';
  else if (enabled.length === 0) text = `All ${rows.length === 1 ? 'servers are' : `${rows.length} servers are`} turned off`;
  else text = `${connected} of ${enabled.length} connected`;
  if (problems.length > 0) text += ` — ${problems.join('; ')}`;
  if (off > 0 && enabled.length > 0) text += ` (${off} turned off)`;
  return { total: rows.length, enabled: enabled.length, connected, text };
}
