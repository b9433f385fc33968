/**
 * The real core (createCore) for OAuth tests from the attacker's side: the real OS keychain
 * (gnome-keyring in a private D-Bus session), settings in a temporary folder, optionally the
 * durable ledger with the app's one redactor, the contract handlers a (compromised) renderer
 * calls, a browser stand-in, and a recording stand-in for the native dialogs.
 *
 * `TestNetwork` stands in for DNS and for hosts that are not on this machine: it makes a host name
 * resolve to any address (through the core's `resolveHost` port) and, for names served by a
 * loopback fixture, delivers the request there (in place of the global `fetch`, which is what a
 * real network would answer). Nothing else about the requests changes, so whatever Warden sends
 * to such a host is what the fixture records.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import { createCore, type CoreDeps, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { LedgerService } from '../../../electron/core/ledger/service';
import type { OriginQuestion, ResolveHost } from '../../../electron/core/mcp/oauth/network-scope';
import type { BrowserOpener } from '../../../electron/core/ports';
import { Redactor } from '../../../electron/core/redact/redactor';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import type { ServerChangeSummary } from '../../../electron/core/settings/server-confirmation';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import type { ChannelName, RequestOf, ResponseOf } from '../../../shared/ipc';

/** A browser stand-in: loads the authorization URL and follows redirects to Warden's loopback receiver. */
export class FollowingBrowser implements BrowserOpener {
  readonly opened: string[] = [];
  readonly visits: Promise<void>[] = [];
  /** Runs before the real redirect is followed (e.g. another local page hitting the receiver). */
  constructor(private readonly before?: (authorizationUrl: URL) => Promise<void>) {}

  async open(url: string): Promise<void> {
    this.opened.push(url);
    this.visits.push(this.visit(url).catch(() => undefined));
  }

  private async visit(url: string): Promise<void> {
    await this.before?.(new URL(url));
    const answer = await fetch(url, { redirect: 'manual' });
    await answer.body?.cancel();
    const location = answer.headers.get('location');
    if (!location) return;
    const landed = await fetch(new URL(location, url), { redirect: 'manual' });
    await landed.body?.cancel();
  }
}

/** Host names that resolve where a test says, and (optionally) are served by a loopback fixture. */
export class TestNetwork {
  private readonly hosts = new Map<string, { addresses: string[]; servedBy?: string }>();
  private readonly realFetch = globalThis.fetch;
  /** Every URL requested through the network, as requested (before delivery). */
  readonly requested: string[] = [];

  /** `hostname` resolves to `addresses`; requests to it are delivered to `servedBy` (http://127.0.0.1:port). */
  host(hostname: string, addresses: string[], servedBy?: string): this {
    this.hosts.set(hostname, { addresses, ...(servedBy ? { servedBy } : {}) });
    return this;
  }

  readonly resolve: ResolveHost = async (hostname) => {
    const entry = this.hosts.get(hostname);
    if (!entry) {
      const { systemResolver } = await import('../../../electron/core/mcp/oauth/network-scope');
      return systemResolver(hostname);
    }
    return entry.addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

  readonly fetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    this.requested.push(url.href);
    const entry = this.hosts.get(url.hostname);
    if (!entry?.servedBy) return this.realFetch(input, init);
    return this.realFetch(new URL(`${url.pathname}${url.search}`, entry.servedBy), init);
  }) as typeof fetch;

  /** Installs this network as the global fetch for the rest of the test. */
  install(): this {
    vi.stubGlobal('fetch', this.fetch);
    return this;
  }
}

export interface CoreWorld {
  core: WardenCore;
  dataDir: string;
  service: string;
  browser: FollowingBrowser;
  ledger?: LedgerService;
  /** Every server-change confirmation main would have shown. */
  serverDialogs: ServerChangeSummary[];
  /** Every "contact another site?" question main would have shown. */
  originQuestions: OriginQuestion[];
  /** Calls a contract channel the way the renderer does; throws on an error result. */
  call<C extends ChannelName>(channel: C, request: RequestOf<C>): Promise<ResponseOf<C>>;
  /** Calls a contract channel; returns the error result instead of throwing. */
  attempt<C extends ChannelName>(channel: C, request: RequestOf<C>): Promise<{ ok: true; value: ResponseOf<C> } | { ok: false; error: { code: string; message: string } }>;
  /** Connects one account through the contract; resolves with the resulting state and reason (also when it failed). */
  connect(serverId: string, accountId: string): Promise<{ state: string; reason?: string }>;
  /** A fresh keychain store of the same service, without cache: the OS keychain's own answer. */
  keychain(): KeytarSecretStore;
  close(): Promise<void>;
}

export interface CoreWorldOptions {
  browser?: FollowingBrowser;
  /** Answer to "contact another site?" (default: yes, as a person expecting that site would). */
  allowOrigins?: boolean;
  /** Open the durable ledger, with the app's one redactor fed by the keychain and OAuth. */
  ledger?: boolean;
  resolveHost?: ResolveHost;
  dataDir?: string;
  service?: string;
  extra?: Partial<CoreDeps>;
}

/** Starts a core as main assembles it (keychain, settings, ledger, dialogs as recording stand-ins). */
export async function startCoreWorld(options: CoreWorldOptions = {}): Promise<CoreWorld> {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
    throw new Error('No D-Bus session: run these tests with scripts/with-keyring.sh (they use the real OS keychain)');
  }
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'warden-oauth-core-'));
  const service = options.service ?? `Warden-oauth-core-${randomBytes(4).toString('hex')}`;
  const redactor = new Redactor();
  const onSecretValue = (value: string) => redactor.register(value);
  const ledger = options.ledger ? await LedgerService.open({ dir: join(dataDir, 'ledger'), redactor }) : undefined;
  const browser = options.browser ?? new FollowingBrowser();
  const serverDialogs: ServerChangeSummary[] = [];
  const originQuestions: OriginQuestion[] = [];
  const core = createCore({
    version: 'test',
    ...(ledger ? { ledger } : {}),
    servers: {
      settingsStore: openConfSettingsStore(dataDir),
      secrets: new KeytarSecretStore({ service, onSecretValue }),
      onSecretValue,
    },
    browser,
    confirmServerChange: async (summary) => {
      serverDialogs.push(summary);
      return true;
    },
    confirmAuthorizationServer: async (question) => {
      originQuestions.push(question);
      return options.allowOrigins ?? true;
    },
    ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
    gate: { prompter: { prompt: async () => 'approve' } },
    connections: { reconnect: { maxAttempts: 0 }, connectTimeoutMs: 20_000 },
    ...options.extra,
  });
  await core.recovered;
  const attempt = async <C extends ChannelName>(channel: C, request: RequestOf<C>) =>
    (await dispatch(core.handlers, channel, request)) as { ok: true; value: ResponseOf<C> } | { ok: false; error: { code: string; message: string } };
  const world: CoreWorld = {
    core,
    dataDir,
    service,
    browser,
    ...(ledger ? { ledger } : {}),
    serverDialogs,
    originQuestions,
    attempt,
    call: async (channel, request) => {
      const r = await attempt(channel, request);
      if (!r.ok) throw new Error(`${channel}: ${r.error.code}: ${r.error.message}`);
      return r.value;
    },
    connect: async (serverId, accountId) => {
      await attempt('connections:connect', { serverId, accountId });
      const { connections } = await world.call('connections:status', { serverId });
      const status = connections.find((c) => c.accountId === accountId)?.status ?? { state: 'unknown' };
      return status as { state: string; reason?: string };
    },
    keychain: () => new KeytarSecretStore({ service }),
    close: async () => {
      await core.close();
      await Promise.allSettled(browser.visits);
    },
  };
  return world;
}

/** Every file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** The text of every file under `dir` (latin1, so any byte sequence can be searched). */
export function textUnder(dir: string): string {
  return filesUnder(dir)
    .map((f) => readFileSync(f, 'latin1'))
    .join('\n');
}

/** Deletes every keychain entry of `service` and the data folder. */
export async function cleanUpWorld(world: { dataDir: string; service: string }): Promise<void> {
  const store = new KeytarSecretStore({ service: world.service });
  for (const k of await store.keys('')) await store.delete(k);
  rmSync(world.dataDir, { recursive: true, force: true });
}
