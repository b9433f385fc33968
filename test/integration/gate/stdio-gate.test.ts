/**
 * The gate against a real spawned stdio MCP server (test/fixtures/counting-server.ts) that writes
 * every call it receives to a file: counts come from the server's own record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Gate } from '../../../electron/core/gate/gate';
import { ClientRegistry, FakeClock, RecordingJournal, TestPolicy, historyOf } from './harness';

const root = path.resolve(import.meta.dirname, '../../..');
const tsxLoader = pathToFileURL(path.join(root, 'node_modules/tsx/dist/loader.mjs')).href;

let dir: string;
let countFile: string;
let client: Client;
let transport: StdioClientTransport;

/** Calls the server process recorded, read from its own fsync'd file. */
function serverCalls(): Array<{ tool: string; args: Record<string, unknown> }> {
  if (!existsSync(countFile)) return [];
  return readFileSync(countFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'warden-gate-stdio-'));
  countFile = path.join(dir, 'calls.jsonl');
  transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', tsxLoader, path.join(root, 'test/fixtures/counting-server.ts')],
    env: { ...process.env, COUNT_FILE: countFile } as Record<string, string>,
    stderr: 'pipe',
  });
  client = new Client({ name: 'warden-test', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  const pid = transport?.pid;
  try {
    await client?.close();
  } finally {
    if (pid) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('gate over a spawned stdio server', () => {
  it('deny never reaches the server, ask waits for approval, allow reaches it exactly once', async () => {
    const clock = new FakeClock();
    const journal = new RecordingJournal(clock);
    const policy = new TestPolicy();
    const registry = new ClientRegistry().add('counting', { client }, ['work']);
    await registry.refresh();
    const gate = new Gate({ journal, history: historyOf(journal), executor: registry, registry, policy, clock, scheduleExpiry: false });
    try {
      const dc = registry.getTool('counting', 'work', 'delete_file')!;
      const rf = registry.getTool('counting', 'work', 'read_file')!;
      policy.set({
        user: [
          { id: 'no-delete', scope: { kind: 'tool', serverId: 'counting', accountId: null, toolName: 'delete_file' }, mode: 'disabled', pin: { contractHash: dc.contractHash, endpointHash: dc.endpointHash } },
          {
            id: 'docs',
            scope: { kind: 'tool-constraint', serverId: 'counting', accountId: 'work', toolName: 'read_file', constraints: [{ op: 'pathUnder', field: 'path', value: '/project/docs' }] },
            mode: 'allow',
            pin: { contractHash: rf.contractHash, endpointHash: rf.endpointHash },
          },
        ],
      });
      const base = { source: 'model' as const, conversationId: 'c', serverId: 'counting', accountId: 'work' };
      const denied = await gate.request({ ...base, toolName: 'delete_file', arguments: { path: '/project' } });
      const escaped = await gate.submit({ ...base, toolName: 'read_file', arguments: { path: '/project/docs/../secrets/key' } });
      const allowed = await gate.request({ ...base, toolName: 'read_file', arguments: { path: '/project/docs/readme.md' } });
      expect(denied.state).toBe('denied');
      expect(escaped.state).toBe('awaiting_approval');
      expect(allowed.state).toBe('succeeded');
      expect(allowed.decision?.reason).toMatch(/^Allowed: you set Always Allow for read_file on .* \(work\) when path is under \/project\/docs$/);
      expect(serverCalls()).toEqual([{ tool: 'read_file', args: { path: '/project/docs/readme.md' }, pid: transport.pid }]);
      await gate.approve(escaped.operationId);
      await gate.settled(escaped.operationId);
      expect(serverCalls().map((c) => c.args.path)).toEqual(['/project/docs/readme.md', '/project/docs/../secrets/key']);
    } finally {
      gate.close();
    }
  });
});
