/**
 * Shared setup for the MCP integration tests: fixture server definitions (spawned as real
 * processes through `node --import tsx`), an in-memory server directory, a SecretStore over a
 * Map (the keychain-backed store is tested with the real keyring elsewhere), and helpers to start
 * HTTP fixtures on a random loopback port and to wait for conditions without fixed sleeps.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterEach } from 'vitest';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { HttpServerDefinition, ServerDefinition, StdioServerDefinition } from '../../../shared/domain/servers';
import { ConnectionManager, type ConnectionManagerOptions } from '../../../electron/core/mcp/connection-manager';
import type { ServerDirectory } from '../../../electron/core/mcp/ports';
import { endpointHash } from '../../../electron/core/settings/identity';
import type { SecretStore } from '../../../electron/core/ports';

export const ROOT = resolve(import.meta.dirname, '../../..');
export const TSX_LOADER = pathToFileURL(resolve(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

/** Absolute path of a fixture server file. */
export function fixturePath(name: string): string {
  return resolve(ROOT, 'test/fixtures/servers', `${name}.ts`);
}

/** A stdio definition that runs `test/fixtures/servers/<fixture>.ts` as a real process. */
export function stdioFixture(
  id: string,
  fixture: string,
  env: StdioServerDefinition['env'] = [],
  extra: Partial<StdioServerDefinition> = {},
): StdioServerDefinition {
  return {
    id,
    name: `Fixture ${fixture}`,
    transport: 'stdio',
    command: process.execPath,
    args: ['--import', TSX_LOADER, fixturePath(fixture)],
    env,
    ...extra,
  };
}

/** An http definition for a fixture already listening at `url`. */
export function httpDefinition(id: string, url: string, extra: Partial<HttpServerDefinition> = {}): HttpServerDefinition {
  return { id, name: `HTTP ${id}`, transport: 'http', url, headers: [], auth: { kind: 'none' }, ...extra };
}

/** A SecretStore over a Map, recording every key read. */
export class MapSecretStore implements SecretStore {
  readonly values = new Map<string, string>();
  readonly reads: string[] = [];
  async get(key: string): Promise<string | null> {
    this.reads.push(key);
    return this.values.get(key) ?? null;
  }
  async set(key: string, value: string): Promise<void> {
    this.values.set(key, value);
  }
  async delete(key: string): Promise<boolean> {
    return this.values.delete(key);
  }
}

/** A directory of definitions, each with the accounts given (default: one account "default"). */
export class MapDirectory implements ServerDirectory {
  readonly servers = new Map<string, ServerDefinition>();
  readonly accounts = new Map<string, Map<string, string>>();
  add(def: ServerDefinition, accounts: Record<string, string> = { default: 'Default' }): this {
    this.servers.set(def.id, def);
    this.accounts.set(def.id, new Map(Object.entries(accounts)));
    return this;
  }
  server(serverId: string): ServerDefinition | undefined {
    return this.servers.get(serverId);
  }
  accountLabel(serverId: string, accountId: string): string | undefined {
    return this.accounts.get(serverId)?.get(accountId);
  }
  endpointHash(definition: ServerDefinition): string {
    return endpointHash(definition);
  }
}

/** A manager over the given definitions with test-friendly timeouts. */
export function makeManager(
  defs: ServerDefinition[],
  options: Partial<ConnectionManagerOptions> = {},
): { manager: ConnectionManager; directory: MapDirectory; secrets: MapSecretStore } {
  const directory = new MapDirectory();
  for (const d of defs) directory.add(d);
  const secrets = (options.secrets as MapSecretStore | undefined) ?? new MapSecretStore();
  const manager = new ConnectionManager({
    directory,
    secrets,
    connectTimeoutMs: 45_000,
    reconnect: { baseDelayMs: 50, maxDelayMs: 400, maxAttempts: 3 },
    ...options,
  });
  return { manager, directory, secrets };
}

/** Polls `condition` until it returns truthy or `timeoutMs` passes. */
export async function waitUntil<T>(condition: () => T | Promise<T>, timeoutMs = 20_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A fixture (or any server) started by the test itself on a loopback port. */
export interface StartedHttpServer {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  stop: () => Promise<void>;
}

/**
 * Starts `command args` and waits for `LISTENING <url>` on stdout (or for `ready(stderr)`),
 * killing the process if it does not come up.
 */
export async function startHttpProcess(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; urlFrom?: (stdout: string, stderr: string) => string | undefined } = {},
): Promise<StartedHttpServer> {
  const child = spawn(command, args, { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  const urlFrom = options.urlFrom ?? ((stdout) => /LISTENING (\S+)/.exec(stdout)?.[1]);
  try {
    const url = await waitUntil(() => {
      if (child.exitCode !== null) throw new Error(`server exited early: ${err}`);
      return urlFrom(out, err);
    }, 45_000, `${args.join(' ')} to listen`);
    return { url, child, stderr: () => err, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Starts a fixture in `--http` or `--sse` mode. */
export function startHttpFixture(fixture: string, mode: '--http' | '--sse', env: Record<string, string> = {}): Promise<StartedHttpServer> {
  return startHttpProcess(process.execPath, ['--import', TSX_LOADER, fixturePath(fixture), mode], { env });
}

/** The published server-everything (its stdio and Streamable HTTP modes are what the reference tests drive). */
export const EVERYTHING = resolve(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** A port nothing listens on right now (another process may still take it before it is used). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolvePort(port));
    });
  });
}

/** server-everything over Streamable HTTP on a free port, tried again if the port was taken between probing and listening. */
export async function startEverythingHttp(): Promise<StartedHttpServer> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      return await startHttpProcess(process.execPath, [EVERYTHING, 'streamableHttp'], {
        env: { PORT: String(port) },
        urlFrom: (_out, err) => (err.includes(`listening on port ${port}`) ? `http://127.0.0.1:${port}/mcp` : undefined),
      });
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

/** The text of the first text content block of a tool result. */
export function firstText(result: { content: Array<Record<string, unknown>> }): string {
  const block = result.content.find((c) => c.type === 'text');
  return typeof block?.text === 'string' ? block.text : '';
}

/**
 * Closes, after each test, every manager handed to the returned `track` (which kills their
 * servers' process trees). Call once at the top level of a test file.
 */
export function trackManagers(): <T extends { manager: ConnectionManager }>(made: T) => T {
  let managers: ConnectionManager[] = [];
  afterEach(async () => {
    await Promise.all(managers.map((m) => m.close()));
    managers = [];
  });
  return (made) => {
    managers.push(made.manager);
    return made;
  };
}
