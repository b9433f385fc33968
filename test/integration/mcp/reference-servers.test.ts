/**
 * Published reference servers run as real processes and are connected, listed and called
 * through the gate (with a policy that allows everything): @modelcontextprotocol/server-everything
 * over stdio and over Streamable HTTP, and @modelcontextprotocol/server-filesystem on a temp folder.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MemoryHistory } from '../../../electron/core/ledger/history';
import { Gate } from '../../../electron/core/gate/gate';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import type { ConnectionManager } from '../../../electron/core/mcp/connection-manager';
import { PolicyState } from '../../../shared/domain/policy';
import { freePort, httpDefinition, makeManager, ROOT, startHttpProcess, type StartedHttpServer } from './helpers';

const EVERYTHING = resolve(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM = resolve(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

/** A gate over the manager with a policy that allows every tool (the policy is not under test here). */
function gateOver(manager: ConnectionManager) {
  const journal = new MemoryJournal(systemClock);
  const policy = PolicyState.parse({ user: [{ id: 'allow-all', scope: { kind: 'global' }, mode: 'allow' }] });
  const gate = new Gate({ journal, history: new MemoryHistory(() => journal.read()), executor: manager, registry: manager, policy: { current: () => policy }, scheduleExpiry: false });
  return { gate, journal };
}

let managers: ConnectionManager[] = [];
let gates: Gate[] = [];
afterEach(async () => {
  gates.forEach((g) => g.close());
  gates = [];
  await Promise.all(managers.map((m) => m.close()));
  managers = [];
});

describe('server-everything', () => {
  it('over stdio: connected, listed, and echo called through the gate', async () => {
    const made = makeManager([{ id: 'everything', name: 'Everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] }]);
    managers.push(made.manager);
    const status = await made.manager.connect('everything', 'default');
    expect(status).toMatchObject({ state: 'connected', transport: 'stdio' });
    const names = made.manager.listTools({ serverId: 'everything' }).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    const { gate, journal } = gateOver(made.manager);
    gates.push(gate);
    const op = await gate.request({ source: 'user', serverId: 'everything', accountId: 'default', toolName: 'echo', arguments: { message: 'hello gate' } });
    expect(op.state).toBe('succeeded');
    expect(JSON.stringify(op.result)).toContain('hello gate');
    expect(journal.read().some((r) => r.type === 'op.transition' && (r.payload as { to?: string }).to === 'executing')).toBe(true);
  });

  let http: StartedHttpServer | undefined;
  afterAll(async () => {
    await http?.stop();
  });

  it('over Streamable HTTP: connected, listed, and echo called through the gate', async () => {
    for (let attempt = 0; !http; attempt++) {
      const port = await freePort();
      try {
        http = await startHttpProcess(process.execPath, [EVERYTHING, 'streamableHttp'], {
          env: { PORT: String(port) },
          urlFrom: (_out, err) => (err.includes(`listening on port ${port}`) ? `http://127.0.0.1:${port}/mcp` : undefined),
        });
      } catch (error) {
        if (attempt >= 3) throw error; // the port was taken between probing and listening
      }
    }
    const made = makeManager([httpDefinition('everything-http', http.url)]);
    managers.push(made.manager);
    const status = await made.manager.connect('everything-http', 'default');
    expect(status).toMatchObject({ state: 'connected', transport: 'streamable-http' });
    expect(made.manager.listTools({ serverId: 'everything-http' }).map((t) => t.name)).toContain('echo');
    const { gate } = gateOver(made.manager);
    gates.push(gate);
    const op = await gate.request({ source: 'user', serverId: 'everything-http', accountId: 'default', toolName: 'echo', arguments: { message: 'over http' } });
    expect(op.state).toBe('succeeded');
    expect(JSON.stringify(op.result)).toContain('over http');
  });
});

describe('server-filesystem', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-fs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('on a temp folder: lists tools, reads a file through the gate, and refuses a path outside the folder', async () => {
    writeFileSync(join(dir, 'note.txt'), 'contents written by the test');
    const made = makeManager([{ id: 'files', name: 'Files', transport: 'stdio', command: process.execPath, args: [FILESYSTEM, dir], env: [] }]);
    managers.push(made.manager);
    const status = await made.manager.connect('files', 'default');
    expect(status.state).toBe('connected');
    expect(made.manager.listTools({ serverId: 'files' }).map((t) => t.name)).toEqual(expect.arrayContaining(['read_text_file', 'write_file', 'list_directory']));
    const { gate } = gateOver(made.manager);
    gates.push(gate);
    const read = await gate.request({ source: 'user', serverId: 'files', accountId: 'default', toolName: 'read_text_file', arguments: { path: join(dir, 'note.txt') } });
    expect(read.state).toBe('succeeded');
    expect(JSON.stringify(read.result)).toContain('contents written by the test');
    const outside = await gate.request({ source: 'user', serverId: 'files', accountId: 'default', toolName: 'read_text_file', arguments: { path: '/etc/hostname' } });
    expect(outside.state).toBe('failed');
    expect(JSON.stringify(outside.result ?? outside.error)).toMatch(/denied|outside|not allowed/i);
  });
});
