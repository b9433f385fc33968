/**
 * Output schemas from the attacker's side: a hostile server (test/fixtures/servers/bad-output.ts)
 * whose answers break the outputSchema it declared, listed one tool per page, called through the
 * gate over stdio and Streamable HTTP; and server-everything's structured tool, whose answers keep
 * their schema, over both transports.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryHistory } from '../../../electron/core/ledger/history';
import { Gate } from '../../../electron/core/gate/gate';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import type { ConnectionManager } from '../../../electron/core/mcp/connection-manager';
import { PolicyState } from '../../../shared/domain/policy';
import type { ServerDefinition } from '../../../shared/domain/servers';
import { freePort, httpDefinition, makeManager, ROOT, startHttpFixture, startHttpProcess, stdioFixture, trackManagers, type StartedHttpServer } from './helpers';

const EVERYTHING = resolve(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const track = trackManagers();
let dir: string;
let callsFile: string;
let gates: Gate[] = [];
let servers: StartedHttpServer[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'warden-output-'));
  callsFile = join(dir, 'calls.jsonl');
});
afterEach(async () => {
  gates.forEach((g) => g.close());
  gates = [];
  await Promise.all(servers.map((s) => s.stop()));
  servers = [];
  rmSync(dir, { recursive: true, force: true });
});

/** A gate that allows every tool over a manager connected to `def` (the policy is not under test here). */
async function gateOn(def: ServerDefinition): Promise<{ gate: Gate; journal: MemoryJournal; manager: ConnectionManager }> {
  const { manager } = track(makeManager([def]));
  expect(await manager.connect(def.id, 'default')).toMatchObject({ state: 'connected' });
  const journal = new MemoryJournal(systemClock);
  const policy = PolicyState.parse({ user: [{ id: 'allow-all', scope: { kind: 'global' }, mode: 'allow' }] });
  const gate = new Gate({ journal, history: new MemoryHistory(() => journal.read()), executor: manager, registry: manager, policy: { current: () => policy }, scheduleExpiry: false });
  gates.push(gate);
  return { gate, journal, manager };
}

function received(): string[] {
  if (!existsSync(callsFile)) return [];
  return readFileSync(callsFile, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { tool: string }).tool);
}

async function badOutputOver(transport: 'stdio' | 'http'): Promise<ServerDefinition> {
  if (transport === 'stdio') return stdioFixture('bad', 'bad-output', [{ name: 'CALLS_FILE', value: callsFile }]);
  const started = await startHttpFixture('bad-output', '--http', { CALLS_FILE: callsFile });
  servers.push(started);
  return httpDefinition('bad', started.url);
}

describe.each(['stdio', 'http'] as const)('a server that breaks its declared output schema, over %s', (transport) => {
  it("a structured answer that breaks the tool's outputSchema ends failed as the server's error, journaled with the reason, on whichever page the tool was listed", async () => {
    const { gate, journal } = await gateOn(await badOutputOver(transport));
    // `weather` is on the first of five pages of tools/list.
    const op = await gate.request({ source: 'user', serverId: 'bad', accountId: 'default', toolName: 'weather', arguments: { city: 'Oslo' } });
    expect(op.state).toBe('failed');
    expect(op.result).toBeNull();
    expect(op.error).toMatchObject({ code: 'TOOL_CALL_FAILED' });
    expect(op.error!.message).toBe("the server's answer does not match the output schema it declared for weather: data/temperature must be number");
    // It reached the server (it may have acted): the failure is the server's, recorded as such.
    expect(received()).toEqual(['weather']);
    const outcome = journal.read().find((r) => r.type === 'op.transition' && (r.payload as { to?: string }).to === 'failed');
    expect(JSON.stringify(outcome)).toContain('The server answered with an error: the server\'s answer does not match the output schema it declared for weather');
  });

  it("an answer without structured content from a tool that declared an outputSchema fails; the tool's own error answer without it is delivered, and kept schemas succeed", async () => {
    const { gate } = await gateOn(await badOutputOver(transport));
    const request = (toolName: string) => gate.request({ source: 'user', serverId: 'bad', accountId: 'default', toolName, arguments: {} });
    const missing = await request('no_structure');
    expect(missing.state).toBe('failed');
    expect(missing.error!.message).toBe('the server declared an output schema for no_structure but answered without structured content');
    const good = await request('good_weather');
    expect(good.state).toBe('succeeded');
    expect(good.result).toMatchObject({ structuredContent: { temperature: 21 } });
    const failing = await request('failing');
    // The tool's own error answer (isError, text only) is delivered as the tool's error, not refused.
    expect(failing).toMatchObject({ state: 'failed', reason: 'The tool reported an error', error: null, result: { isError: true } });
    expect((await request('plain')).state).toBe('succeeded');
  });
});

async function everythingOver(transport: 'stdio' | 'http'): Promise<ServerDefinition> {
  if (transport === 'stdio') return { id: 'everything', name: 'Everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] };
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      const started = await startHttpProcess(process.execPath, [EVERYTHING, 'streamableHttp'], {
        env: { PORT: String(port) },
        urlFrom: (_out, err) => (err.includes(`listening on port ${port}`) ? `http://127.0.0.1:${port}/mcp` : undefined),
      });
      servers.push(started);
      return httpDefinition('everything', started.url);
    } catch (error) {
      if (attempt >= 3) throw error; // the port was taken between probing and listening
    }
  }
}

describe.each(['stdio', 'http'] as const)('server-everything over %s', (transport) => {
  it('get-structured-content answers keep their outputSchema and succeed through the gate, the schema pinned with the tool', async () => {
    const { gate, manager } = await gateOn(await everythingOver(transport));
    const tool = manager.connection('everything', 'default')!.tool('get-structured-content')!;
    expect(tool.outputSchema).toMatchObject({ properties: { temperature: { type: 'number' } } });
    expect(tool.fieldHashes.outputSchema).toMatch(/^[0-9a-f]{64}$/);
    const op = await gate.request({ source: 'user', serverId: 'everything', accountId: 'default', toolName: 'get-structured-content', arguments: { location: 'Chicago' } });
    expect(op.state).toBe('succeeded');
    expect(op.result).toMatchObject({ structuredContent: { temperature: 36 } });
  });
});
