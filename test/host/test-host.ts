/**
 * The browser test host (test code only, never shipped).
 *
 * Runs the real core in plain Node and lets a normal browser page use it exactly as the Electron
 * renderer would: it serves the built renderer over HTTP on 127.0.0.1 with a stand-in preload
 * injected before the app's module script, and serves the contract over a loopback WebSocket that
 * requires a random per-host token and the host's own Origin. Calls are dispatched with the same
 * `dispatch` main uses; core events are pushed to every connected page.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { dispatch, type ErrorLogger } from '../../electron/core/dispatch';
import type { WardenCore } from '../../electron/core/app-core';
import { fail, type Result } from '../../shared/result';
import {
  SOCKET_PATH,
  STANDIN_PATH,
  SUBPROTOCOL,
  TOKEN_PROTOCOL_PREFIX,
  type StandinConfig,
  type WireResponse,
} from './wire';

export interface TestHostOptions {
  /** The core to serve; the caller owns it (and closes it). */
  core: Pick<WardenCore, 'handlers' | 'events'>;
  /** Folder of the built renderer (out/renderer), containing index.html. */
  rendererDir: string;
  /** Where unexpected errors go; defaults to console.error. */
  logError?: ErrorLogger;
}

export interface TestHost {
  /** The page to open, e.g. http://127.0.0.1:41234/ */
  url: string;
  /** The host's origin; the only Origin the socket accepts. */
  origin: string;
  /** ws://127.0.0.1:<port>/__warden-test-host/socket */
  socketUrl: string;
  /** The per-host token (exposed for tests that open their own sockets). */
  token: string;
  /** Stops accepting, closes every socket and the HTTP server. Does not close the core. */
  close(): Promise<void>;
}

/** Largest accepted socket message; contract requests are small. */
const MAX_MESSAGE_BYTES = 1024 * 1024;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

const STANDIN_SOURCE = fileURLToPath(new URL('./standin-preload.ts', import.meta.url));

/**
 * Bundles the stand-in preload for the browser (classic script, no imports left).
 *
 * Why at host start: the stand-in is generated from shared/ipc.ts, so bundling it from source
 * each time guarantees it matches the contract the core was built from.
 */
export async function bundleStandin(): Promise<string> {
  const out = await build({
    entryPoints: [STANDIN_SOURCE],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    logLevel: 'silent',
    legalComments: 'none',
  });
  const file = out.outputFiles[0];
  if (!file) throw new Error('esbuild produced no output for the stand-in preload');
  return file.text;
}

/** sha256 both sides then compare, so the comparison takes the same time whatever the input length. */
function tokensEqual(candidate: string, expected: string): boolean {
  const a = createHash('sha256').update(candidate).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Offered subprotocols from the handshake header. */
function offeredProtocols(req: IncomingMessage): string[] {
  const header = req.headers['sec-websocket-protocol'];
  if (typeof header !== 'string') return [];
  return header.split(',').map((p) => p.trim()).filter(Boolean);
}

/** Inserts the stand-in as a classic script right before the app's first module script. */
function injectStandin(html: string): string {
  const at = html.search(/<script\b[^>]*type=["']module["']/i);
  if (at < 0) throw new Error('index.html has no <script type="module">: is this a built renderer?');
  return `${html.slice(0, at)}<script src="${STANDIN_PATH}"></script>\n    ${html.slice(at)}`;
}

function rejectUpgrade(socket: Duplex, status: number, why: string): void {
  const body = `${why}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** Checks one socket message's shape; returns the request or an error response. */
function parseWireRequest(data: RawData, isBinary: boolean): { id: number | string; channel: unknown; request: unknown } | WireResponse {
  if (isBinary) return { id: null, result: fail('INVALID_REQUEST', 'binary frames are not accepted: send JSON text') };
  let message: unknown;
  try {
    message = JSON.parse(data.toString());
  } catch {
    return { id: null, result: fail('INVALID_REQUEST', 'message is not valid JSON') };
  }
  if (!message || typeof message !== 'object' || Array.isArray(message)) {
    return { id: null, result: fail('INVALID_REQUEST', 'message must be a JSON object {id, channel, request}') };
  }
  const m = message as Record<string, unknown>;
  const id = m.id;
  const idOk = (typeof id === 'number' && Number.isSafeInteger(id)) || (typeof id === 'string' && id.length > 0 && id.length <= 100);
  if (!idOk) {
    return { id: null, result: fail('INVALID_REQUEST', 'id: expected a safe integer or a string of 1-100 characters') };
  }
  if (typeof m.channel !== 'string') return { id, result: fail('INVALID_REQUEST', 'channel: expected a string') };
  if (!('request' in m)) return { id, result: fail('INVALID_REQUEST', 'request: missing (send {} for channels without fields)') };
  return { id, channel: m.channel, request: m.request };
}

/**
 * Starts the host on 127.0.0.1 with a random port and token.
 *
 * Why these checks: the socket gives full use of the core, so only the page this host served may
 * use it — Origin must be the host's own origin (stops other web pages), the token must match
 * (stops other local processes, which can fake an Origin), and the Host header must be the
 * loopback address (stops DNS rebinding from reading the stand-in script).
 */
export async function startTestHost(options: TestHostOptions): Promise<TestHost> {
  const { core } = options;
  const logError: ErrorLogger = options.logError ?? ((ctx, e) => console.error(`[test host] ${ctx}`, e));
  const rendererDir = await realpath(resolve(options.rendererDir));
  const indexHtml = injectStandin(await readFile(join(rendererDir, 'index.html'), 'utf8'));
  const standinBundle = await bundleStandin();
  const token = randomBytes(16).toString('hex');

  let origin = '';
  let hostHeader = '';
  let standinScript = '';

  const serveStatic = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, {
        'Content-Type': type,
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.headers.host !== hostHeader) return send(403, 'text/plain', `Host must be ${hostHeader}\n`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'Only GET and HEAD\n');
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', origin).pathname);
    } catch {
      return send(400, 'text/plain', 'Bad URL\n');
    }
    if (pathname === '/' || pathname === '/index.html') return send(200, CONTENT_TYPES['.html']!, indexHtml);
    if (pathname === STANDIN_PATH) return send(200, CONTENT_TYPES['.js']!, standinScript);
    const file = resolve(rendererDir, `.${pathname}`);
    // Browsers ask for a favicon that Electron never requests; answer without a console 404.
    if (pathname === '/favicon.ico' && !existsSync(file)) return send(204, 'image/x-icon', '');
    if (!file.startsWith(rendererDir + sep)) return send(404, 'text/plain', 'Not found\n');
    try {
      const real = await realpath(file);
      if (!real.startsWith(rendererDir + sep) || !(await stat(real)).isFile()) return send(404, 'text/plain', 'Not found\n');
      return send(200, CONTENT_TYPES[extname(real)] ?? 'application/octet-stream', await readFile(real));
    } catch {
      return send(404, 'text/plain', 'Not found\n');
    }
  };

  const server = createServer((req, res) => {
    serveStatic(req, res).catch((error) => {
      logError(`serving ${req.url}`, error);
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end('Internal error\n');
    });
  });

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    // Select only our protocol; the token protocol is never echoed back.
    handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    let pathname = '';
    try {
      pathname = new URL(req.url ?? '/', origin).pathname;
    } catch {
      /* rejected below */
    }
    if (pathname !== SOCKET_PATH) return rejectUpgrade(socket, 404, 'Not found');
    if (req.headers.host !== hostHeader) return rejectUpgrade(socket, 403, `Host must be ${hostHeader}`);
    if (req.headers.origin !== origin) return rejectUpgrade(socket, 403, `Origin must be ${origin}`);
    const offered = offeredProtocols(req);
    const tokens = offered.filter((p) => p.startsWith(TOKEN_PROTOCOL_PREFIX));
    if (!offered.includes(SUBPROTOCOL)) return rejectUpgrade(socket, 400, `Subprotocol ${SUBPROTOCOL} is required`);
    if (tokens.length !== 1 || !tokensEqual(tokens[0]!.slice(TOKEN_PROTOCOL_PREFIX.length), token)) {
      return rejectUpgrade(socket, 401, 'A valid token is required');
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  const send = (ws: WebSocket, message: WireResponse | { event: string; payload: unknown }) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  };

  wss.on('connection', (ws: WebSocket) => {
    ws.on('error', (error) => logError('socket error', error));
    ws.on('message', (data, isBinary) => {
      void (async () => {
        const parsed = parseWireRequest(data, isBinary);
        if ('result' in parsed) return send(ws, parsed);
        let result: Result<unknown>;
        try {
          result = await dispatch(core.handlers, parsed.channel, parsed.request, logError);
        } catch (error) {
          // dispatch already turns handler failures into Results; this is a last guard.
          logError('dispatch threw', error);
          result = fail('INTERNAL', 'the test host failed to dispatch the request');
        }
        send(ws, { id: parsed.id, result });
      })().catch((error) => logError('socket message', error));
    });
  });

  const unsubscribe = core.events.subscribe((event, payload) => {
    for (const ws of wss.clients) send(ws, { event, payload });
  });

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', rejectListen);
      resolveListen();
    });
  });
  const { port } = server.address() as AddressInfo;
  hostHeader = `127.0.0.1:${port}`;
  origin = `http://${hostHeader}`;
  const socketUrl = `ws://${hostHeader}${SOCKET_PATH}`;
  const config: StandinConfig = { socketUrl, token };
  standinScript = `(() => {\nconst __WARDEN_TEST_HOST__ = ${JSON.stringify(config)};\n${standinBundle}\n})();\n`;

  let closed: Promise<void> | null = null;
  return {
    url: `${origin}/`,
    origin,
    socketUrl,
    token,
    close: () =>
      (closed ??= (async () => {
        unsubscribe();
        for (const ws of wss.clients) ws.terminate();
        await new Promise<void>((r) => wss.close(() => r()));
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      })()),
  };
}
