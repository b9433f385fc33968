/**
 * Every kind of connection failure is told apart in the core, where it happens, and reaches the
 * renderer as data through the `connections:connect` contract (dispatch parses the answer against
 * the contract, so a failure the contract cannot carry would fail here too).
 *
 * Real failures only: a command that is not on PATH, a file that may not be run, a working folder
 * that is gone, processes that exit at start, print logs on stdout or never answer, a closed
 * loopback port, a loopback HTTPS server with a self-signed certificate, loopback HTTP servers
 * answering 401/403/404/500, a host name under `.invalid` (RFC 6761: never resolves), a secret
 * missing from the keychain, and a server that dies after it connected.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import type { ConnectionView } from '../../../shared/contract/connections';
import type { ConnectFailure } from '../../../shared/domain/connect-failure';
import type { ServerDraft, ServerView } from '../../../shared/domain/servers';
import type { ChannelName } from '../../../shared/ipc';
import { MapSecretStore, ROOT, stdioFixture, waitUntil } from './helpers';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

let core: WardenCore | undefined;
let dir: string;
const servers: Server[] = [];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'warden-connect-failures-'));
});
afterEach(async () => {
  await core?.close();
  core = undefined;
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  rmSync(dir, { recursive: true, force: true });
});

async function call<T>(channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(core!.handlers, channel, request, () => {});
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}

/** Adds `definition` to a fresh core and connects it through the contract; returns the connection's state. */
async function connect(definition: ServerDraft, connectTimeoutMs = 20_000): Promise<ConnectionView['status']> {
  core = createCore({
    confirmServerChange: confirmEveryServerChange,
    version: 'test',
    journal: new MemoryJournal(systemClock),
    servers: { secrets: Object.assign(new MapSecretStore(), { keys: async () => [] }) },
    // Stands in for main's native dialog (only the crash test sets a tool to Always Allow).
    gate: { prompter: { prompt: async () => 'approve' } },
    connections: { connectTimeoutMs, reconnect: { maxAttempts: 0 } },
  });
  const added = await call<ServerView>('servers:add', { definition });
  const view = await call<ConnectionView>('connections:connect', { serverId: added.definition.id, accountId: added.accounts[0]!.id });
  return view.status;
}

function failureOf(status: ConnectionView['status']): ConnectFailure {
  if (status.state !== 'error') throw new Error(`expected an error state, got ${JSON.stringify(status)}`);
  if (!status.failure) throw new Error(`the error carries no failure: ${JSON.stringify(status)}`);
  return status.failure;
}

const stdio = (command: string, args: string[] = [], extra: Partial<Extract<ServerDraft, { transport: 'stdio' }>> = {}): ServerDraft => ({
  name: 'Broken local server',
  transport: 'stdio',
  command,
  args,
  env: [],
  ...extra,
});
const http = (url: string): ServerDraft => ({ name: 'Broken remote server', transport: 'http', url, headers: [], auth: { kind: 'none' } });

/** A loopback HTTP(S) server answering every request with `status`; returns its port. */
async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

describe('stdio servers that cannot start', () => {
  it('a command that is not on PATH is "command-not-found", naming the command', async () => {
    const failure = failureOf(await connect(stdio('uvx-warden-not-installed', ['some-server'])));
    expect(failure).toEqual({ kind: 'command-not-found', command: 'uvx-warden-not-installed' });
  });

  it('a file that may not be executed is "permission-denied"', async () => {
    const file = path.join(dir, 'not-executable.sh');
    writeFileSync(file, '#!/bin/sh\necho hi\n');
    chmodSync(file, 0o644);
    const failure = failureOf(await connect(stdio(file)));
    expect(failure).toEqual({ kind: 'permission-denied', command: file });
  });

  it('a working folder that does not exist is told apart from a missing command', async () => {
    const gone = path.join(dir, 'no-such-folder');
    const failure = failureOf(await connect(stdio(process.execPath, ['-e', ''], { cwd: gone })));
    expect(failure).toEqual({ kind: 'working-folder-missing', command: process.execPath, cwd: gone });
  });

  it('a process that exits at start reports its exit code and its last stderr line, sanitized', async () => {
    const script = "console.error('starting…'); console.error('\\u001b[31mError: GITHUB_TOKEN is not set\\u001b[0m'); process.exit(3)";
    const failure = failureOf(await connect(stdio(process.execPath, ['-e', script])));
    expect(failure).toEqual({
      kind: 'process-exited',
      command: process.execPath,
      atStart: true,
      exitCode: 3,
      signal: null,
      lastStderr: 'Error: GITHUB_TOKEN is not set',
    });
  });

  it('a program that prints logs on stdout instead of speaking MCP is "not-mcp", quoting what it printed', async () => {
    const failure = failureOf(await connect(stdio(process.execPath, ['-e', "console.log('Server listening on port 3000'); setInterval(() => {}, 1000)"]), 1500));
    expect(failure).toEqual({ kind: 'not-mcp', detail: 'Server listening on port 3000' });
  });

  it('a process that never answers is a "timeout" with the limit that was waited', async () => {
    const failure = failureOf(await connect(stdio(process.execPath, ['-e', 'setInterval(() => {}, 1000)']), 1500));
    expect(failure).toEqual({ kind: 'timeout', ms: 1500 });
  });

  it('a secret missing from the keychain is named', async () => {
    const failure = failureOf(await connect(stdio(process.execPath, ['-e', ''], { env: [{ name: 'API_TOKEN', secret: true }] })));
    expect(failure).toEqual({ kind: 'missing-secret', name: 'env:API_TOKEN' });
  });
});

describe('remote servers that cannot be reached', () => {
  it('a closed loopback port is "refused", with the host and port', async () => {
    const probe = createHttpServer();
    const port = await listen(probe);
    await new Promise((r) => probe.close(r));
    const failure = failureOf(await connect(http(`http://127.0.0.1:${port}/mcp`)));
    expect(failure).toEqual({ kind: 'refused', host: '127.0.0.1', port });
  });

  it('an HTTPS server with a self-signed certificate is a "tls" failure of kind self-signed', async () => {
    const tls = path.join(ROOT, 'test/fixtures/tls');
    const server = createHttpsServer(
      { cert: readFileSync(path.join(tls, 'self-signed-cert.pem')), key: readFileSync(path.join(tls, 'self-signed-key.pem')) },
      (_req, res) => res.end('{}'),
    );
    const port = await listen(server);
    const failure = failureOf(await connect(http(`https://127.0.0.1:${port}/mcp`)));
    expect(failure).toMatchObject({ kind: 'tls', host: '127.0.0.1', problem: 'self-signed' });
  });

  it.each([401, 403, 404, 500, 503])('a server answering HTTP %i is an "http-status" failure with that status', async (status) => {
    const port = await listen(createHttpServer((_req, res) => res.writeHead(status, { 'content-type': 'text/plain' }).end(`status ${status}`)));
    const failure = failureOf(await connect(http(`http://127.0.0.1:${port}/mcp`)));
    expect(failure).toEqual({ kind: 'http-status', host: '127.0.0.1', status });
  });

  it('a host name that does not resolve is a "dns" failure naming the host', async () => {
    const failure = failureOf(await connect(http('https://warden-test.invalid/mcp')));
    expect(failure).toEqual({ kind: 'dns', host: 'warden-test.invalid' });
  });
});

describe('a server that dies after it connected', () => {
  it('reports the exit as "process-exited" after start, with its last stderr line', async () => {
    const def = stdioFixture('ignored', 'crash');
    const status = await connect(stdio(def.command, def.args));
    expect(status.state).toBe('connected');
    const serverId = core!.servers.definitions()[0]!.id;
    const accountId = (await call<{ accounts: Array<{ id: string }> }>('accounts:list', { serverId })).accounts[0]!.id;
    // The crash tool makes the process exit; the call itself ends outcome_unknown (not our concern here).
    await call('permissions:set', { scope: 'tool', serverId, accountId, toolName: 'crash', mode: 'allow' });
    await core!.gate.gate.submit({ source: 'user', conversationId: null, serverId, accountId, toolName: 'crash', arguments: {} }).catch(() => undefined);
    const after = await waitUntil(async () => {
      const { connections } = await call<{ connections: ConnectionView[] }>('connections:status', { serverId });
      const s = connections[0]?.status;
      return s?.state === 'error' && s.failure ? s : undefined;
    }, 20_000, 'the connection to report the exit');
    expect(failureOf(after)).toEqual({
      kind: 'process-exited',
      command: def.command,
      atStart: false,
      exitCode: 3,
      signal: null,
      lastStderr: 'crash: work done, exiting before the reply',
    });
  });
});
