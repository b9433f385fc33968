/**
 * Servers that start themselves: the enabled switch, connecting every enabled server when Warden
 * starts (all at once, not one after another), retrying a server whose connect failed with a
 * growing delay whose next attempt time is part of the data, Restart, and the overview the
 * Servers list and its summary line are drawn from.
 *
 * The switch is stored as the list of servers turned OFF (preferences.disabledServers), so a
 * settings file written before the switch existed keeps every server on.
 *
 * Retrying here covers connects this module started (launch, turning on, Restart, its own
 * retries). A connection that drops after it was up retries on its own (connection.ts); this
 * module only turns that connection's `retryInMs` into an absolute time. A connect the person
 * started by hand that fails stays failed (Restart is one click away); a server that needs a
 * sign-in is never retried (only the person can sign in).
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
  timer: NodeJS.Timeout;
}

/** A server this module gave up on (until Restart, turning it on again, or a successful connect). */
interface GaveUp {
  attempts: number;
  reason: string;
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
   * Connects every enabled server at once (their first account) and resolves when each has
   * connected or failed (a failed one has its first retry scheduled by then).
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
      await this.deps.manager.disconnect(serverId);
    }
    return this.row(this.requireServer(serverId));
  }

  /** Disconnects every account of a server, forgets its retries, and connects it again. */
  async restart(serverId: string): Promise<ServerOverviewRow> {
    this.requireServer(serverId);
    this.stop(serverId);
    await this.deps.manager.disconnect(serverId);
    void this.start(serverId);
    return this.row(this.requireServer(serverId));
  }

  /** Connects a server's first account, scheduling a retry if that fails. */
  private async start(serverId: string, attempt = 0): Promise<void> {
    if (this.closed) return;
    if (attempt === 0) this.stop(serverId);
    const generation = this.bump(serverId);
    const accountId = this.deps.servers.accountsOf(serverId)[0]?.id;
    if (accountId === undefined) return;
    let status: ConnectionStatus;
    try {
      status = await this.deps.manager.connect(serverId, accountId);
    } catch (error) {
      // The server or account went away meanwhile, or Warden is shutting down.
      if (this.generations.get(serverId) !== generation || this.closed) return;
      status = { state: 'error', reason: error instanceof Error ? error.message : String(error) };
    }
    if (this.generations.get(serverId) !== generation || this.closed) return;
    if (status.state === 'connected') {
      this.gaveUp.delete(serverId);
    } else if (status.state === 'error' && status.retryInMs === undefined && this.isEnabled(serverId)) {
      this.scheduleRetry(serverId, attempt + 1, status.reason);
    }
    this.queueOverview();
  }

  private scheduleRetry(serverId: string, attempt: number, reason: string): void {
    if (attempt > this.policy.maxAttempts) {
      this.gaveUp.set(serverId, { attempts: attempt - 1, reason });
      return;
    }
    const delay = Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** (attempt - 1));
    const timer = setTimeout(() => {
      if (this.retries.get(serverId)?.timer !== timer) return;
      this.retries.delete(serverId);
      void this.start(serverId, attempt);
    }, delay);
    timer.unref?.();
    this.retries.set(serverId, { attempt, at: this.deps.clock.now() + delay, reason, timer });
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
    if (status.state === 'disconnected' && this.retries.has(serverId)) this.stop(serverId);
    if (status.state === 'connected') this.gaveUp.delete(serverId);
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
    let attempt: number | null = null;
    let nextAttemptAt: number | null = null;
    if (connected.length > 0) state = 'connected';
    else if (connecting) {
      state = 'connecting';
      if (connecting.status.state === 'connecting' && connecting.status.attempt > 1) attempt = connecting.status.attempt;
    } else if (retry) {
      state = 'retrying';
      reason = retry.reason;
      attempt = retry.attempt;
      nextAttemptAt = retry.at;
    } else if (reconnecting && reconnecting.status.state === 'error') {
      state = 'retrying';
      reason = reconnecting.status.reason;
      attempt = reconnecting.status.attempt ?? null;
      nextAttemptAt = reconnecting.nextAttemptAt;
    } else if (failing && failing.status.state === 'auth_required') {
      state = 'needs_sign_in';
      reason = failing.status.reason;
    } else if (failing && failing.status.state === 'error') {
      state = 'failed';
      reason = failing.status.reason;
      attempt = gaveUp ? gaveUp.attempts + 1 : null;
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
 * The summary line: "5 of 6 connected — Files failed: command not found". Counts enabled servers;
 * names every one that is not connected, with why.
 */
export function summarize(rows: readonly ServerOverviewRow[]): ServersOverview['summary'] {
  const enabled = rows.filter((r) => r.enabled || r.state === 'connected');
  const connected = enabled.filter((r) => r.state === 'connected').length;
  const off = rows.length - enabled.length;
  const problems = enabled
    .filter((r) => r.state !== 'connected')
    .map((r) => {
      const why = r.reason ? shortReason(r.reason) : '';
      switch (r.state) {
        case 'connecting':
          return `${r.name} connecting`;
        case 'retrying':
          return `${r.name} failed${why ? `: ${why}` : ''} (retrying)`;
        case 'failed':
          return `${r.name} failed${why ? `: ${why}` : ''}`;
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

/** A reason for the summary line: without the "; gave up after …" tail or a repeated command name, bounded for one line. */
function shortReason(reason: string): string {
  // "Could not start uvx: command not found: uvx" → "command not found: uvx": the name is already in the cause.
  const first = reason
    .split('; gave up after')[0]!
    .trim()
    .replace(/^Could not start .+?: (?=(command not found|working folder not found|permission denied)\b)/i, '');
  return first.length > 120 ? `${first.slice(0, 119)}…` : first;
}
