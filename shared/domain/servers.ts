/**
 * Server definitions and accounts.
 *
 * These schemas are what the settings file stores and what the connection layer reads. Secret
 * VALUES are never part of them: an env var or header is either a plain `value` or a
 * `secret: true` marker whose value lives only in the OS keychain under `secretKey(...)`. Views
 * sent to the renderer carry `hasSecret` flags, never values.
 *
 * Pure: no node:*, no electron. The endpoint hash (needs node:crypto) lives in
 * electron/core/settings/identity.ts.
 */
import { z } from 'zod';
import { envSecretProblem } from './secret-env-names';

// ---- identifiers ----------------------------------------------------------------------------

/**
 * A stable id chosen at creation (slug of the name + random suffix) and never derived from what a
 * server says about itself (`serverInfo.name`), so a server cannot pick or change its identity.
 */
export const EntityId = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$/, 'expected a lowercase id of letters, digits and dashes (1-80 chars)');
export type EntityId = z.infer<typeof EntityId>;

/** A display name: trimmed, 1–100 characters, no control characters. */
export const DisplayName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters')
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters');

/** Per-call timeout bounds: 1 s to 1 h. */
export const TimeoutMs = z.number().int().min(1000, 'must be at least 1000 ms').max(3_600_000, 'must be at most 1 hour');

// ---- env vars and headers -------------------------------------------------------------------

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function namedValue(nameRule: RegExp, nameHint: string) {
  return z
    .object({
      name: z.string().regex(nameRule, nameHint),
      /** The plain value; absent when `secret` is true (the value is in the keychain). */
      value: z.string().max(32_768, 'must be at most 32768 characters').optional(),
      /** True when the value lives only in the OS keychain. */
      secret: z.boolean().optional(),
    })
    .strict()
    .superRefine((v, ctx) => {
      if (v.secret === true && v.value !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['value'],
          message: 'must be absent when secret is true (secret values live only in the OS keychain)',
        });
      }
      if (v.secret !== true && v.value === undefined) {
        ctx.addIssue({ code: 'custom', path: ['value'], message: 'is required unless secret is true' });
      }
    });
}

/** An environment variable for a stdio server: `{name, value}` or `{name, secret: true}`. */
export const EnvVar = namedValue(ENV_NAME, 'expected an environment variable name (letters, digits, _; not starting with a digit)');
export type EnvVar = z.infer<typeof EnvVar>;

/** An HTTP header for a remote server: `{name, value}` or `{name, secret: true}`. */
export const HeaderEntry = namedValue(HEADER_NAME, 'expected an HTTP header name (token characters only)');
export type HeaderEntry = z.infer<typeof HeaderEntry>;

function uniqueNames(caseInsensitive: boolean) {
  return (list: ReadonlyArray<{ name: string }>, ctx: z.RefinementCtx) => {
    const seen = new Set<string>();
    list.forEach((e, i) => {
      const k = caseInsensitive ? e.name.toLowerCase() : e.name;
      if (seen.has(k)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate name "${e.name}"` });
      seen.add(k);
    });
  };
}

/**
 * Only a variable whose name says it holds a credential may be hidden in the keychain (see
 * secret-env-names.ts): every other value is something the save dialog must show in full.
 */
function onlyCredentialSecrets(list: ReadonlyArray<{ name: string; secret?: boolean }>, ctx: z.RefinementCtx, path: Array<string | number>): void {
  list.forEach((e, i) => {
    const problem = e.secret === true ? envSecretProblem(e.name) : null;
    if (problem) ctx.addIssue({ code: 'custom', path: [...path, i, 'secret'], message: problem });
  });
}

// ---- URLs ------------------------------------------------------------------------------------

/** Hostnames that resolve only to this machine; plain http is allowed only to these. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h);
}

/**
 * Why `raw` is not an acceptable server URL, or null if it is.
 *
 * https anywhere, http only on loopback (a token sent over plain http to another host is a token
 * given away). No user:password in the URL, because the URL is stored in the settings file.
 */
export function serverUrlProblem(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'expected an absolute URL such as https://example.com/mcp';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return `scheme ${u.protocol} is not allowed (use https)`;
  if (u.protocol === 'http:' && !isLoopbackHost(u.hostname)) {
    return `plain http is only allowed on loopback (127.0.0.1, ::1, localhost); use https for ${u.hostname}`;
  }
  if (u.username || u.password) return 'must not contain a username or password (use a secret header or bearer token)';
  return null;
}

/** A remote server URL: https, or http on loopback only. */
export const ServerUrl = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .superRefine((raw, ctx) => {
    const problem = serverUrlProblem(raw);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

// ---- auth ------------------------------------------------------------------------------------

/** How a remote server authenticates. Tokens never appear here; they live in the keychain. */
export const HttpAuth = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none') }).strict(),
  /** A static bearer token, stored in the keychain under `secretKey(server, account, BEARER_SECRET)`. */
  z.object({ kind: z.literal('bearer') }).strict(),
  /** OAuth 2.1; tokens are stored keyed by issuer (`secretKey(..., issuer)`). */
  z
    .object({
      kind: z.literal('oauth'),
      /** A pre-registered client id; absent → dynamic client registration. */
      clientId: z.string().min(1).max(500).optional(),
      scopes: z.array(z.string().min(1).max(200)).max(50).optional(),
    })
    .strict(),
]);
export type HttpAuth = z.infer<typeof HttpAuth>;

// ---- server definitions ---------------------------------------------------------------------

/** A local server: a process Warden spawns (without a shell). */
export const StdioServerDefinition = z
  .object({
    id: EntityId,
    name: DisplayName,
    transport: z.literal('stdio'),
    /** The executable; run directly, never through a shell. */
    command: z.string().min(1, 'must not be empty').max(4096),
    args: z.array(z.string().max(32_768)).max(500).default([]),
    cwd: z.string().min(1).max(4096).optional(),
    // Which names may be secret is checked where a definition is saved (SavedServerDefinition,
    // ServerDraft), not here: a file written before that rule still loads, and the connection
    // refuses to start the program with such a hidden value instead (mcp/transports.ts).
    env: z.array(EnvVar).max(200).default([]).superRefine(uniqueNames(false)),
    timeoutMs: TimeoutMs.optional(),
  })
  .strict();
export type StdioServerDefinition = z.infer<typeof StdioServerDefinition>;

/** A remote server reached over Streamable HTTP (with legacy SSE fallback). */
export const HttpServerDefinition = z
  .object({
    id: EntityId,
    name: DisplayName,
    transport: z.literal('http'),
    url: ServerUrl,
    headers: z.array(HeaderEntry).max(100).default([]).superRefine(uniqueNames(true)),
    auth: HttpAuth.default({ kind: 'none' }),
    timeoutMs: TimeoutMs.optional(),
  })
  .strict();
export type HttpServerDefinition = z.infer<typeof HttpServerDefinition>;

/**
 * A server built into Warden that runs inside its own process over an in-memory transport (the
 * offline demo): nothing is spawned or contacted, so there is no command line or URL to show.
 */
export const BuiltinServerDefinition = z
  .object({
    id: EntityId,
    name: DisplayName,
    transport: z.literal('builtin'),
    /** Which built-in server; only Warden's own code provides them. */
    builtin: z.enum(['demo']),
    timeoutMs: TimeoutMs.optional(),
  })
  .strict();
export type BuiltinServerDefinition = z.infer<typeof BuiltinServerDefinition>;

/** One configured MCP server, discriminated on `transport`. */
export const ServerDefinition = z.discriminatedUnion('transport', [StdioServerDefinition, HttpServerDefinition, BuiltinServerDefinition]);
export type ServerDefinition = z.infer<typeof ServerDefinition>;

/** The rules a definition must meet when it is saved (added, edited, imported), on top of being readable. */
function savable(def: { transport: string; env?: ReadonlyArray<{ name: string; secret?: boolean }> }, ctx: z.RefinementCtx): void {
  if (def.transport === 'stdio' && def.env) onlyCredentialSecrets(def.env, ctx, ['env']);
}

/** A definition as it may be saved now: readable, and with only credential variables secret. */
export const SavedServerDefinition = ServerDefinition.superRefine(savable);

/** A server definition as a person enters it: everything but the id, which Warden chooses. */
export const ServerDraft = z
  .discriminatedUnion('transport', [StdioServerDefinition.omit({ id: true }), HttpServerDefinition.omit({ id: true }), BuiltinServerDefinition.omit({ id: true })])
  .superRefine(savable);
export type ServerDraft = z.infer<typeof ServerDraft>;

// ---- accounts --------------------------------------------------------------------------------

/**
 * A credential profile of a server ("Work", "Personal"): its own secrets in the keychain, its own
 * connection, its own permission key (serverId, accountId, toolName).
 */
/** The least severe log message level a server is asked to send (MCP `logging/setLevel`). */
export const LogLevel = z.enum(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);
export type LogLevel = z.infer<typeof LogLevel>;

export const Account = z
  .object({
    id: EntityId,
    serverId: EntityId,
    label: DisplayName,
    /** The log level the person chose for this account's server (absent: `info`). */
    logLevel: LogLevel.optional(),
  })
  .strict();
export type Account = z.infer<typeof Account>;

// ---- secret keying ---------------------------------------------------------------------------

/** Secret name of a static bearer token. */
export const BEARER_SECRET = 'bearer';

/** Secret name of a pre-registered OAuth client's secret (optional; the OAuth layer reads it). */
export const OAUTH_CLIENT_SECRET = 'oauth-client-secret';

/** Secret name of an env var marked secret. */
export function envSecretName(envName: string): string {
  return `env:${envName}`;
}

/** Secret name of a header marked secret (header names are case-insensitive, so lowercased). */
export function headerSecretName(headerName: string): string {
  return `header:${headerName.toLowerCase()}`;
}

/**
 * The keychain key of one secret: by server, account and name, plus issuer for OAuth material.
 *
 * `serverId/accountId/` is a fixed prefix (ids contain no `/`), so every secret of a server or of
 * an account can be found and deleted by prefix. Name and issuer are URI-encoded so a name can
 * never forge another server's or account's prefix.
 */
export function secretKey(serverId: string, accountId: string, name: string, issuer?: string): string {
  const base = `${serverId}/${accountId}/${encodeURIComponent(name)}`;
  return issuer === undefined ? base : `${base}@${encodeURIComponent(issuer)}`;
}

/** Splits a key made by `secretKey` back into its parts; null for anything else. */
export function parseSecretKey(key: string): { serverId: string; accountId: string; name: string; issuer?: string } | null {
  const m = /^([a-z0-9-]+)\/([a-z0-9-]+)\/([^/@]+)(?:@([^/@]+))?$/.exec(key);
  if (!m) return null;
  try {
    const name = decodeURIComponent(m[3]!);
    return m[4] === undefined
      ? { serverId: m[1]!, accountId: m[2]!, name }
      : { serverId: m[1]!, accountId: m[2]!, name, issuer: decodeURIComponent(m[4]) };
  } catch {
    return null;
  }
}

/** The key prefix shared by every secret of a server (or of one of its accounts). */
export function secretKeyPrefix(serverId: string, accountId?: string): string {
  return accountId === undefined ? `${serverId}/` : `${serverId}/${accountId}/`;
}

// ---- command line ---------------------------------------------------------------------------

/**
 * The exact command line a stdio server runs, for display: every argument shown in full, quoted
 * when it contains anything but safe characters. Never truncated — a person approving a local
 * server must see exactly what will run.
 */
export function displayCommandLine(command: string, args: readonly string[]): string {
  return [command, ...args].map(quoteArg).join(' ');
}

function quoteArg(a: string): string {
  if (a !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(a)) return a;
  // Control characters are made visible rather than hidden inside a quoted string.
  // eslint-disable-next-line no-control-regex
  const visible = a.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return `'${visible.replace(/'/g, `'\\''`)}'`;
}

// ---- views (what the renderer may learn) ----------------------------------------------------

/** Whether one secret of one account is set. The value itself never leaves main. */
export const SecretStatus = z
  .object({
    /** The secret's name in the keying convention, e.g. `env:API_KEY`, `header:authorization`, `bearer`. */
    name: z.string(),
    hasSecret: z.boolean(),
  })
  .strict();
export type SecretStatus = z.infer<typeof SecretStatus>;

/** An account as the renderer sees it. */
export const AccountView = Account.extend({ secrets: z.array(SecretStatus) }).strict();
export type AccountView = z.infer<typeof AccountView>;

/** A server as the renderer sees it: its definition (no secret values), the exact command line, accounts. */
export const ServerView = z
  .object({
    definition: ServerDefinition,
    /** The exact, untruncated command line for stdio servers; null for http. */
    commandLine: z.string().nullable(),
    accounts: z.array(AccountView),
  })
  .strict();
export type ServerView = z.infer<typeof ServerView>;

/**
 * The secret names a person can set for each account of a server: the required ones, plus the
 * optional client secret of a pre-registered OAuth client.
 */
export function settableSecretNames(def: ServerDefinition): string[] {
  const names = requiredSecretNames(def);
  if (def.transport === 'http' && def.auth.kind === 'oauth' && def.auth.clientId !== undefined) names.push(OAUTH_CLIENT_SECRET);
  return names;
}

/** The secret names a server definition needs per account (env/header secrets, bearer token). */
export function requiredSecretNames(def: ServerDefinition): string[] {
  if (def.transport === 'builtin') return [];
  if (def.transport === 'stdio') return def.env.filter((e) => e.secret === true).map((e) => envSecretName(e.name));
  const names = def.headers.filter((h) => h.secret === true).map((h) => headerSecretName(h.name));
  if (def.auth.kind === 'bearer') names.push(BEARER_SECRET);
  return names;
}
