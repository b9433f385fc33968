/**
 * Where the OAuth traffic of one MCP server may go: the defence against a server (or an
 * authorization server it names) using Warden to reach places it cannot reach itself.
 *
 * A server's `WWW-Authenticate` header, its protected-resource metadata and the authorization
 * server's metadata are all written by the other side, and each of them names URLs Warden then
 * requests in the background. Three rules decide whether such a URL may be requested:
 *
 * 1. **Addresses.** Every host name is resolved (through the injectable `ResolveHost` port) and
 *    every address it resolves to is classified. Public addresses are fine. Loopback is allowed
 *    only when the MCP server itself is on this computer, private-network addresses only when the
 *    MCP server itself is on a private network; link-local (cloud metadata services live there)
 *    and reserved addresses never. The connection then uses exactly the addresses that were
 *    checked (the `dispatcher`'s lookup runs the same check when the socket is opened), so a name
 *    that resolves to a public address when checked and to 127.0.0.1 a moment later (DNS
 *    rebinding) is refused too.
 * 2. **Origins.** The server's own origin is what the person confirmed. Any other origin (an
 *    authorization server on another site) is used only after the person said yes to it in a
 *    native dialog (`OriginConfirmer`, sign-in only), or when it is the authorization server this
 *    account already signed in with; the endpoints listed in that server's verified metadata
 *    count as part of it. A background connection never asks: it refuses.
 * 3. **Headers.** Headers configured on the server definition (API keys, cookies) are meant for
 *    the server and are never sent to another origin.
 *
 * The server's own origin is exempt from rules 1 and 2: the person chose that address.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { Agent } from 'undici';
import { isLoopbackHost } from '../../../../shared/domain/servers';
import { WardenError } from '../../../../shared/result';

/** What an IP address is, for deciding whether OAuth traffic may go there. */
export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (the DNS port; tests make names point anywhere). */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

/** The operating system's resolver (what the connection would use), every address. */
export const systemResolver: ResolveHost = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** What the person is asked before Warden contacts another site for a server's sign-in. */
export interface OriginQuestion {
  /** The server's name as the person gave it. */
  serverName: string;
  /** The server's address (origin + path). */
  serverUrl: string;
  /** The other site, e.g. `https://login.example.com`. */
  origin: string;
  /** The first URL Warden would request there (origin + path, never a query). */
  url: string;
}

/** Asks the person; resolves true only if they chose to continue. */
export type OriginConfirmer = (question: OriginQuestion) => Promise<boolean>;

export interface OAuthNetworkScopeOptions {
  serverName: string;
  /** The MCP server's URL, as configured. */
  serverUrl: string | URL;
  /** Names of headers configured on the server definition (sent to the server's origin only). */
  serverHeaderNames?: readonly string[];
  resolve?: ResolveHost;
  /** The authorization server this account already signed in with (the person chose it then). */
  approvedIssuer?: () => Promise<string | null | undefined>;
  /** Sign-in only: asks before another origin is contacted. Absent: other origins are refused. */
  confirm?: OriginConfirmer;
}

/**
 * A background connection's refusal to contact an authorization server the person has not chosen
 * for this account. An UnauthorizedError, so the connection shows "sign in" (the remedy: signing
 * in asks the person about it), carrying the sentence that names the site.
 */
export class SignInNeeded extends UnauthorizedError {
  constructor(message: string) {
    super(message);
    this.name = 'SignInNeeded';
  }
}

/** Where the server itself is, which decides what non-public addresses it may send Warden to. */
type ServerReach = 'loopback' | 'private' | 'public';

const V4: Array<[Exclude<AddressClass, 'public'>, string, number]> = [
  ['reserved', '0.0.0.0', 8],
  ['private', '10.0.0.0', 8],
  ['private', '100.64.0.0', 10], // carrier-grade NAT: someone's private network
  ['loopback', '127.0.0.0', 8],
  ['link-local', '169.254.0.0', 16],
  ['private', '172.16.0.0', 12],
  ['reserved', '192.0.0.0', 24],
  ['reserved', '192.0.2.0', 24],
  ['reserved', '192.88.99.0', 24],
  ['private', '192.168.0.0', 16],
  ['reserved', '198.18.0.0', 15],
  ['reserved', '198.51.100.0', 24],
  ['reserved', '203.0.113.0', 24],
  ['reserved', '224.0.0.0', 4],
  ['reserved', '240.0.0.0', 4],
];
const V6: Array<[Exclude<AddressClass, 'public'>, string, number]> = [
  ['reserved', '::', 128],
  ['loopback', '::1', 128],
  ['reserved', '::', 96], // IPv4-compatible (deprecated); embedded addresses are classified first
  ['reserved', '64:ff9b:1::', 48],
  ['reserved', '100::', 64],
  ['reserved', '2001::', 23],
  ['reserved', '2001:db8::', 32],
  ['private', 'fc00::', 7],
  ['link-local', 'fe80::', 10],
  ['reserved', 'fec0::', 10],
  ['reserved', 'ff00::', 8],
];

const CLASS_ORDER = ['loopback', 'link-local', 'private', 'reserved'] as const;
const blockLists = new Map<Exclude<AddressClass, 'public'>, BlockList>(CLASS_ORDER.map((c) => [c, new BlockList()]));
for (const [c, net, prefix] of V4) blockLists.get(c)!.addSubnet(net, prefix, 'ipv4');
for (const [c, net, prefix] of V6) blockLists.get(c)!.addSubnet(net, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (zone id dropped), or null if it is not one. */
function ipv6Groups(address: string): number[] | null {
  let a = address.split('%')[0]!.toLowerCase();
  const dotted = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(a);
  if (dotted) {
    const [b0, b1, b2, b3] = dotted.slice(2).map(Number) as [number, number, number, number];
    a = `${dotted[1]}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const parts = a.split('::');
  if (parts.length > 2) return null;
  const head = parts[0] ? parts[0].split(':') : [];
  const tail = parts.length === 2 && parts[1] ? parts[1].split(':') : [];
  const fill = parts.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(Math.max(fill, 0)).fill('0'), ...tail].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/**
 * The IPv4 address an IPv6 address carries and routes to, if any: IPv4-mapped (`::ffff:a.b.c.d`),
 * IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`). Classifying the
 * IPv4 address inside stops `::ffff:127.0.0.1` or `2002:7f00:1::` from passing as public.
 */
function embeddedIPv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (!g) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6]!, g[7]!);
  if (zero(0, 6) && (g[6] !== 0 || g[7]! > 1)) return v4(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6]!, g[7]!);
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  return null;
}

/** Classifies one IP address; anything that is not an IP address counts as reserved. */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '');
  const version = isIP(bare.split('%')[0]!);
  if (version === 0) return 'reserved';
  if (version === 6) {
    const inner = embeddedIPv4(bare);
    if (inner !== null) return classifyAddress(inner);
  }
  const type = version === 4 ? 'ipv4' : 'ipv6';
  const plain = bare.split('%')[0]!;
  for (const c of CLASS_ORDER) if (blockLists.get(c)!.check(plain, type)) return c;
  return 'public';
}

const CLASS_WORDS: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: 'an address on this computer (loopback)',
  private: 'an address on a private network',
  'link-local': 'a link-local address (where cloud metadata services answer)',
  reserved: 'a reserved or special-purpose address',
};

/** Origin + path of a URL, never its query or fragment (they may carry a code, state or token). */
export function describeUrl(raw: string | URL): string {
  try {
    const u = raw instanceof URL ? raw : new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return JSON.stringify(String(raw).slice(0, 100));
  }
}

function bareHost(hostname: string): string {
  return hostname.toLowerCase().replace(/^\[|\]$/g, '');
}

/** The network rules of one server's OAuth traffic (see the file comment). */
export class OAuthNetworkScope {
  readonly serverUrl: URL;
  readonly serverName: string;
  /** Lower-case names of headers configured on the server definition. */
  readonly serverHeaderNames: ReadonlySet<string>;
  /**
   * The connection pool every request of this scope goes through: its lookup checks the addresses
   * a host name resolves to at the moment the socket is opened, and connects to exactly those.
   */
  readonly dispatcher: Agent;
  private readonly resolveHost: ResolveHost;
  /** Origins the person allowed in this scope, or that an allowed authorization server listed. */
  private readonly trusted = new Set<string>();
  private readonly questions = new Map<string, Promise<boolean>>();
  private reach: Promise<ServerReach> | undefined;
  private refusal: Error | undefined;

  constructor(private readonly options: OAuthNetworkScopeOptions) {
    this.serverUrl = new URL(options.serverUrl);
    this.serverName = options.serverName;
    this.serverHeaderNames = new Set((options.serverHeaderNames ?? []).map((n) => n.toLowerCase()));
    this.resolveHost = options.resolve ?? systemResolver;
    this.dispatcher = new Agent({
      connect: {
        lookup: ((hostname: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
          // Node's lookup contract: an array when asked for all addresses, else one address and family.
          this.connectAddresses(hostname).then(
            (addresses) => {
              if (lookupOptions?.all) callback(null, addresses);
              else callback(null, addresses[0]!.address, addresses[0]!.family);
            },
            (error: unknown) => callback(error),
          );
        }) as unknown as LookupFunction,
      },
    });
  }

  /** True when `url` is on the server's own origin (what the person confirmed when saving it). */
  isServerOrigin(url: URL): boolean {
    return url.origin === this.serverUrl.origin;
  }

  /**
   * Throws WardenError('DENIED') with a sentence naming the URL and the reason when `url` may not
   * be requested in this scope; resolves when it may (after asking the person, in a sign-in).
   */
  async check(url: URL): Promise<void> {
    if (url.username || url.password) {
      throw new WardenError('DENIED', `Refusing to contact ${describeUrl(url)}: the URL carries a user name or password.`);
    }
    if (this.isServerOrigin(url)) return;
    try {
      await this.allowedAddresses(url.hostname, url);
      await this.checkOrigin(url);
    } catch (error) {
      this.refusal = error as Error;
      throw error;
    }
  }

  /**
   * The last refusal of this scope, once (then forgotten). The SDK swallows a failed
   * protected-resource-metadata request and carries on with the server's own origin as the
   * authorization server; the provider uses this to report the refusal instead of a confusing
   * "no metadata" later.
   */
  takeRefusal(): Error | undefined {
    const r = this.refusal;
    this.refusal = undefined;
    return r;
  }

  /**
   * Records that the authorization server discovered at `discoveredAt` (already allowed in this
   * scope) lists these endpoints, so its token, registration and revocation endpoints may be used
   * even on other origins. Its metadata was fetched from the allowed origin and passed the
   * issuer check, so the endpoints are its own choice.
   */
  trustMetadata(discoveredAt: string, metadata: AuthorizationServerMetadata): void {
    let origin: string;
    try {
      origin = new URL(discoveredAt).origin;
    } catch {
      return;
    }
    if (origin !== this.serverUrl.origin && !this.trusted.has(origin)) return;
    for (const field of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint'] as const) {
      const value = (metadata as Record<string, unknown>)[field];
      if (typeof value !== 'string') continue;
      try {
        this.trusted.add(new URL(value).origin);
      } catch {
        // An unparsable endpoint is refused when it is used.
      }
    }
  }

  /** Closes the connection pool (idle sockets; requests in flight finish). */
  async close(): Promise<void> {
    await this.dispatcher.close().catch(() => undefined);
  }

  private async checkOrigin(url: URL): Promise<void> {
    const origin = url.origin;
    if (this.trusted.has(origin)) return;
    const approved = await this.options.approvedIssuer?.();
    if (approved && originOf(approved) === origin) {
      this.trusted.add(origin);
      return;
    }
    const server = describeUrl(this.serverUrl);
    if (!this.options.confirm) {
      // Not signed in yet: the plain "sign in" answer, naming where sign-in would happen.
      if (!approved) throw new SignInNeeded(`This server needs you to sign in (OAuth, at ${origin}); start sign-in for this account.`);
      throw new SignInNeeded(
        `Refusing to contact ${describeUrl(url)}: it is not on the server's own site (${this.serverUrl.origin}), and ${origin} is not the sign-in site you chose for "${this.serverName}" (${server}). Sign in to this account again to review it.`,
      );
    }
    let answer = this.questions.get(origin);
    if (!answer) {
      const confirm = this.options.confirm;
      answer = confirm({ serverName: this.serverName, serverUrl: server, origin, url: describeUrl(url) }).then(
        (yes) => yes === true,
        () => false,
      );
      this.questions.set(origin, answer);
    }
    if (!(await answer)) {
      throw new WardenError(
        'DENIED',
        `Sign-in stopped: you did not allow Warden to contact ${origin} (${describeUrl(url)}), which "${this.serverName}" (${server}) named for signing in.`,
      );
    }
    this.trusted.add(origin);
  }

  /** Where the server itself is: loopback, a private network, or anywhere else (the default). */
  private serverReach(): Promise<ServerReach> {
    this.reach ??= (async (): Promise<ServerReach> => {
      const host = bareHost(this.serverUrl.hostname);
      if (isLoopbackHost(host)) return 'loopback';
      let addresses: ResolvedAddress[];
      try {
        addresses = await this.addressesOf(host);
      } catch {
        return 'public'; // unknown: the most restrictive answer
      }
      const classes = addresses.map((a) => classifyAddress(a.address));
      if (classes.length > 0 && classes.every((c) => c === 'loopback')) return 'loopback';
      if (classes.length > 0 && classes.every((c) => c === 'private' || c === 'loopback')) return 'private';
      return 'public';
    })();
    return this.reach;
  }

  /** Addresses of `hostname` the socket may use: all of them checked, or a refusal. */
  private async connectAddresses(hostname: string): Promise<ResolvedAddress[]> {
    const host = bareHost(hostname);
    if (host === bareHost(this.serverUrl.hostname)) {
      const own = await this.addressesOf(host);
      if (own.length === 0) throw new WardenError('NOT_CONNECTED', `Could not look up ${host}: no address.`);
      return own;
    }
    return this.allowedAddresses(hostname, null);
  }

  private async addressesOf(host: string): Promise<ResolvedAddress[]> {
    const literal = isIP(host);
    return literal ? [{ address: host, family: literal === 6 ? 6 : 4 }] : this.resolveHost(host);
  }

  /**
   * Resolves `hostname` and returns its addresses if every one of them may be contacted from this
   * scope; throws DENIED naming the URL (or host) and the address otherwise.
   */
  private async allowedAddresses(hostname: string, url: URL | null): Promise<ResolvedAddress[]> {
    const host = bareHost(hostname);
    const what = url ? describeUrl(url) : host;
    // The server's own host (another port of it) is where the person chose to connect.
    if (host === bareHost(this.serverUrl.hostname)) return this.addressesOf(host);
    const literal = isIP(host);
    let addresses: ResolvedAddress[];
    if (literal) addresses = await this.addressesOf(host);
    else {
      try {
        addresses = await this.resolveHost(host);
      } catch (error) {
        const why = (error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error));
        throw new WardenError('DENIED', `Refusing to contact ${what}: ${host} could not be looked up (${why}), so Warden cannot check where it points.`);
      }
      if (addresses.length === 0) throw new WardenError('DENIED', `Refusing to contact ${what}: ${host} has no address.`);
    }
    const reach = await this.serverReach();
    for (const a of addresses) {
      const c = classifyAddress(a.address);
      if (c === 'public') continue;
      if (c === 'loopback' && reach === 'loopback') continue;
      if (c === 'private' && reach === 'private') continue;
      const where = literal ? `${host} is ${CLASS_WORDS[c]}` : `${host} resolves to ${a.address}, ${CLASS_WORDS[c]}`;
      const why =
        c === 'loopback'
          ? `only a server that is itself on this computer may send Warden there, and ${describeUrl(this.serverUrl)} is not`
          : c === 'private'
            ? `only a server that is itself on a private network may send Warden there, and ${describeUrl(this.serverUrl)} is not`
            : 'Warden never sends sign-in requests there';
      throw new WardenError('DENIED', `Refusing to contact ${what}: ${where}; ${why}.`);
    }
    return addresses;
  }
}

function originOf(raw: string): string | null {
  try {
    return new URL(raw).origin;
  } catch {
    return null;
  }
}

/**
 * The refusal inside a failed fetch, if there is one. Errors thrown while a socket is opened
 * (the pinned lookup) reach the caller as `TypeError('fetch failed', { cause })`; the SDK treats
 * a TypeError during discovery as a CORS failure and quietly tries the next URL, so the refusal
 * must come out as itself.
 */
export function refusalIn(error: unknown): WardenError | SignInNeeded | null {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof WardenError || e instanceof SignInNeeded) return e;
  }
  return null;
}
