/**
 * The loopback redirect receiver of a native-app OAuth login (RFC 8252 §7.3).
 *
 * Listens on 127.0.0.1 with a port the OS picks, on one path (`/callback`), for exactly one
 * redirect. The `state` in the redirect must equal the cryptographically random value Warden put
 * in the authorization URL. A request with a wrong or missing `state` is answered with an error
 * page and otherwise ignored: it cannot inject its code, and it cannot end the sign-in either
 * (any web page can make the browser request a loopback URL, so a failure here would let any page
 * cancel a login). Only a redirect with the right `state` settles the sign-in, with its code or
 * the authorization server's error. The receiver is single-use and gives up after a timeout;
 * either way it closes its socket.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WardenError } from '../../../../shared/result';

/** What came back from the authorization server. */
export interface AuthorizationCallback {
  code: string;
  /** The RFC 9207 `iss` parameter, when the authorization server sent one. */
  iss?: string;
}

export interface LoopbackCallbackOptions {
  /** Path of the redirect URI (default `/callback`). */
  path?: string;
  /** How long to wait for the redirect before failing with TIMEOUT (default 5 minutes). */
  timeoutMs?: number;
}

/** A running receiver: its redirect URI, the state to send, and the one callback it will accept. */
export interface LoopbackCallback {
  /** `http://127.0.0.1:<port>/callback`. */
  readonly redirectUrl: string;
  /** The random `state` that the redirect must carry back. */
  readonly state: string;
  /** Resolves with the code of the first valid redirect; rejects on mismatch, error or timeout. */
  readonly result: Promise<AuthorizationCallback>;
  /** Stops listening (idempotent); a pending `result` rejects with CANCELLED. */
  close(): Promise<void>;
}

/** A fresh, unguessable OAuth `state` (256 bits, base64url). */
export function randomState(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Starts a loopback receiver on 127.0.0.1, port 0.
 *
 * Only the configured path consumes the single use; other paths (a browser asking for
 * /favicon.ico) get 404 and change nothing.
 */
export async function startLoopbackCallback(options: LoopbackCallbackOptions = {}): Promise<LoopbackCallback> {
  const path = options.path ?? '/callback';
  const timeoutMs = options.timeoutMs ?? 5 * 60_000;
  const state = randomState();
  let settle: { resolve: (v: AuthorizationCallback) => void; reject: (e: Error) => void } | undefined;
  const result = new Promise<AuthorizationCallback>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Nobody may be awaiting yet; the rejection is still delivered to whoever awaits later.
  result.catch(() => {});
  let done = false;
  let ignored = 0;
  const finish = (outcome: AuthorizationCallback | Error): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    if (outcome instanceof Error) settle!.reject(outcome);
    else settle!.resolve(outcome);
    void closeServer();
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== path) {
      respond(res, 404, 'Not found.');
      return;
    }
    if (done) {
      respond(res, 400, 'This sign-in link was already used. Start the sign-in again from Warden.');
      return;
    }
    const got = url.searchParams.get('state') ?? '';
    if (!sameSecret(got, state)) {
      ignored++;
      respond(res, 400, 'This response does not belong to the sign-in Warden started (wrong or missing state), so Warden ignored it.');
      return;
    }
    const error = url.searchParams.get('error');
    if (error) {
      const description = url.searchParams.get('error_description');
      respond(res, 400, 'Sign-in was not completed. You can close this window.');
      finish(new WardenError('AUTH_FAILED', `The authorization server refused the sign-in: ${clip(error)}${description ? ` (${clip(description)})` : ''}.`));
      return;
    }
    const code = url.searchParams.get('code');
    if (!code) {
      respond(res, 400, 'Sign-in response had no authorization code.');
      finish(new WardenError('AUTH_FAILED', 'The redirect carried no authorization code.'));
      return;
    }
    const iss = url.searchParams.get('iss');
    respond(res, 200, 'Signed in. You can close this window and return to Warden.');
    finish({ code, ...(iss !== null ? { iss } : {}) });
  });
  server.keepAliveTimeout = 1000;

  let closing: Promise<void> | undefined;
  const closeServer = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const timer = setTimeout(() => {
    const also = ignored ? ` (${ignored} request${ignored === 1 ? '' : 's'} with a wrong or missing state ${ignored === 1 ? 'was' : 'were'} ignored)` : '';
    finish(new WardenError('TIMEOUT', `Sign-in timed out: no redirect from the sign-in Warden started came back within ${Math.round(timeoutMs / 1000)} s${also}.`));
  }, timeoutMs);
  timer.unref?.();
  const { port } = server.address() as AddressInfo;

  return {
    redirectUrl: `http://127.0.0.1:${port}${path}`,
    state,
    result,
    close: async () => {
      finish(new WardenError('CANCELLED', 'Sign-in was cancelled.'));
      await closeServer();
    },
  };
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function clip(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 200);
}

function respond(res: ServerResponse, status: number, text: string): void {
  const body = `<!doctype html><meta charset="utf-8"><title>Warden</title><p>${text.replace(/[<&>]/g, '')}</p>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'",
    'referrer-policy': 'no-referrer',
    connection: 'close',
  });
  res.end(body);
}
