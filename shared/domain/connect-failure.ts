/**
 * Why a connection to an MCP server failed, as data.
 *
 * The core tells these kinds apart where the failure happens (the spawn error's errno, the socket
 * error's code, the HTTP status the server answered, the process's exit), so the renderer can
 * say what went wrong and how to fix it without guessing from message text. Every string in a
 * failure that could come from outside (a server's stderr line, a host name from the settings) is
 * sanitized by the core before it is sent.
 */
import { z } from 'zod';

/** What kind of TLS problem stopped the connection. */
export const TlsProblem = z.enum(['self-signed', 'expired', 'not-yet-valid', 'wrong-host', 'untrusted', 'other']);
export type TlsProblem = z.infer<typeof TlsProblem>;

/** One way a connect (or a running connection) can fail. */
export const ConnectFailure = z.discriminatedUnion('kind', [
  /** The command is not on PATH (spawn ENOENT). */
  z.object({ kind: z.literal('command-not-found'), command: z.string() }).strict(),
  /** The working folder the server should start in does not exist. */
  z.object({ kind: z.literal('working-folder-missing'), command: z.string(), cwd: z.string() }).strict(),
  /** The command exists but this user may not run it (spawn EACCES / EPERM). */
  z.object({ kind: z.literal('permission-denied'), command: z.string() }).strict(),
  /**
   * The server's process ended: right after it was started (`atStart`: before it finished the MCP
   * handshake) or later, while connected. `lastStderr` is its last line on stderr, sanitized.
   */
  z
    .object({
      kind: z.literal('process-exited'),
      command: z.string(),
      atStart: z.boolean(),
      exitCode: z.number().int().nullable(),
      signal: z.string().nullable(),
      lastStderr: z.string().nullable(),
    })
    .strict(),
  /** The host name does not resolve (ENOTFOUND, EAI_AGAIN). */
  z.object({ kind: z.literal('dns'), host: z.string() }).strict(),
  /** Nothing listens at the address (ECONNREFUSED). */
  z.object({ kind: z.literal('refused'), host: z.string(), port: z.number().int().nullable() }).strict(),
  /** The network dropped or could not route the connection (reset, unreachable). */
  z.object({ kind: z.literal('network'), host: z.string(), code: z.string() }).strict(),
  /** The TLS handshake failed: the certificate is self-signed, expired, for another host, … */
  z.object({ kind: z.literal('tls'), host: z.string(), problem: TlsProblem, code: z.string() }).strict(),
  /** The server answered with an HTTP status that is not a working MCP endpoint. */
  z.object({ kind: z.literal('http-status'), host: z.string(), status: z.number().int() }).strict(),
  /** No answer in time (connect plus the first tool listing). */
  z.object({ kind: z.literal('timeout'), ms: z.number().int().nonnegative() }).strict(),
  /** A secret the definition needs is not in the keychain. */
  z.object({ kind: z.literal('missing-secret'), name: z.string() }).strict(),
  /** The other side answered, but not as an MCP server (not JSON-RPC, a failed handshake). */
  z.object({ kind: z.literal('not-mcp'), detail: z.string() }).strict(),
  /** Anything else, with what is known. */
  z.object({ kind: z.literal('other'), detail: z.string() }).strict(),
]);
export type ConnectFailure = z.infer<typeof ConnectFailure>;
export type ConnectFailureKind = ConnectFailure['kind'];
