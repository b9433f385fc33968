/**
 * Regular expressions from the attacker's side: a hostile stdio server whose schemas carry a
 * catastrophic pattern (test/fixtures/servers/files.ts), and a compromised renderer that writes a
 * catastrophic glob into a rule, each driven through the core as the app assembles it. A heartbeat
 * timer on the main thread measures how long it was blocked.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import type { UserRule } from '../../../shared/domain/policy';
import { makeManager, MapSecretStore, stdioFixture, trackManagers } from '../mcp/helpers';

const track = trackManagers();
let dir: string;
let callsFile: string;
let cores: WardenCore[] = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'warden-redos-'));
  callsFile = path.join(dir, 'calls.jsonl');
});
afterEach(async () => {
  await Promise.all(cores.map((c) => c.close()));
  cores = [];
  rmSync(dir, { recursive: true, force: true });
});

/** No secrets are involved; the core only needs a store it can list. */
class ListableMapSecretStore extends MapSecretStore {
  async keys(prefix: string): Promise<string[]> {
    return [...this.values.keys()].filter((k) => k.startsWith(prefix));
  }
}

function received(): Array<{ tool: string; args: Record<string, unknown> }> {
  if (!existsSync(callsFile)) return [];
  return readFileSync(callsFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** Spawns the hostile server (with `pattern` in its schemas) and the core's gate over it; every tool allowed. */
async function hostileCore(pattern = '^(a+)+$'): Promise<WardenCore> {
  const def = stdioFixture('files', 'files', [
    { name: 'CALLS_FILE', value: callsFile },
    { name: 'FIXTURE_PATTERN', value: pattern },
  ]);
  const { manager } = track(makeManager([def]));
  expect(await manager.connect('files', 'default')).toMatchObject({ state: 'connected' });
  const allowAll: UserRule = { id: 'all', scope: { kind: 'server', serverId: 'files', accountId: null }, mode: 'allow', pin: null };
  const core = createCore({
    version: 'test',
    servers: { secrets: new ListableMapSecretStore() },
    gate: { registry: manager, executor: manager, initialPolicy: { user: [allowAll] } },
    connections: { reconnect: { maxAttempts: 0 } },
  });
  cores.push(core);
  return core;
}

/** The longest the main thread went without running a 1 ms timer while `work` ran. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number; elapsedMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const beat = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 1);
  const started = performance.now();
  try {
    const value = await work();
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    return { value, stallMs, elapsedMs: now - started };
  } finally {
    clearInterval(beat);
  }
}

/** A model's call through the gate, resolved once decided (an allowed one runs to its end). */
async function call(core: WardenCore, toolName: string, args: Record<string, unknown>) {
  const op = await core.gate.gate.submit({ source: 'model', conversationId: 'c1', serverId: 'files', accountId: 'default', toolName, arguments: args });
  return op.state === 'executing' ? core.gate.gate.settled(op.operationId) : op;
}

// A budget a person does not notice, with room for a loaded 2-core machine. V8's backtracking
// engine took 27 s for the 29-character argument on the shared test machine, doubling per character.
const BUDGET_MS = 250;

describe('regular expressions from servers and rules run in linear time', () => {
  it('a hostile inputSchema pattern ^(a+)+$ decides a long argument in milliseconds, and the main thread never stalls', async () => {
    const core = await hostileCore();
    // Short first: on a backtracking engine this one alone blocks for seconds, the long one for ever.
    for (const name of ['a'.repeat(28) + '!', 'a'.repeat(200_000) + '!']) {
      const { value: op, stallMs, elapsedMs } = await longestStall(() => call(core, 'check_name', { name }));
      expect(op.state, `${name.length} characters`).toBe('validation_failed');
      expect(op.reason).toMatch(/arguments\.name: must match pattern "\^\(a\+\)\+\$"/);
      expect(elapsedMs, `decided a ${name.length}-character argument in`).toBeLessThan(BUDGET_MS);
      expect(stallMs, `main thread blocked while deciding ${name.length} characters for`).toBeLessThan(BUDGET_MS);
    }
    // A matching argument still passes validation and reaches the server.
    const ok = await call(core, 'check_name', { name: 'a'.repeat(200_000) });
    expect(ok.state).toBe('succeeded');
    expect(received().map((c) => c.tool)).toEqual(['check_name']);
  });

  it('hostile patternProperties keys are matched in linear time too', async () => {
    const core = await hostileCore();
    const { value: op, stallMs } = await longestStall(() => call(core, 'tag_items', { tags: { [`${'a'.repeat(28)}!`]: 'x' } }));
    expect(op.state).toBe('validation_failed');
    expect(stallMs).toBeLessThan(BUDGET_MS);
    expect(received()).toEqual([]);
  });

  it("a hostile outputSchema pattern does not stall the main thread when the server's result is checked against it", async () => {
    const core = await hostileCore();
    const { value: op, stallMs } = await longestStall(() => call(core, 'lookup', { n: 28 }));
    expect(stallMs).toBeLessThan(BUDGET_MS);
    // The server broke its own contract: its result is not delivered as a success.
    expect(op.state).not.toBe('succeeded');
    expect(JSON.stringify(op.error)).toMatch(/output schema/);
  });

  it('a pattern that cannot be evaluated in linear time fails the call closed, naming the argument and the pattern', async () => {
    for (const pattern of ['^(?=a)(a+)+$', '^(a+)\\1$']) {
      const core = await hostileCore(pattern);
      const op = await call(core, 'check_name', { name: 'aa' });
      expect(op.state, pattern).toBe('validation_failed');
      expect(op.reason).toContain(`arguments.name: the tool's inputSchema pattern ${JSON.stringify(pattern)} uses a`);
      expect(op.reason).toMatch(/which Warden cannot evaluate in linear time; the call is refused/);
    }
    expect(received()).toEqual([]);
  });

  it('a catastrophic glob written into a rule by a compromised renderer never stalls the gate', async () => {
    const core = await hostileCore();
    // Tightening needs no dialog, so the renderer alone can store this rule.
    const set = await dispatch(core.handlers, 'permissions:set', {
      scope: 'tool-constraint',
      serverId: 'files',
      accountId: null,
      toolName: 'read_file',
      constraints: [{ op: 'matches', field: 'path', value: '*a*a*a*a*a*a*a*a*c' }],
      mode: 'disabled',
    });
    expect(set.ok).toBe(true);
    for (const p of ['a'.repeat(48), 'a'.repeat(200_000)]) {
      const { value: op, stallMs } = await longestStall(() => call(core, 'read_file', { path: p }));
      expect(stallMs, `main thread blocked on a ${p.length}-character path for`).toBeLessThan(BUDGET_MS);
      if (p.length === 48) {
        // Not matching the Disabled glob, the call falls to the server-wide allow.
        expect(op.state).not.toBe('denied');
      } else {
        // No system opens a 200,000-character path (ENAMETOOLONG): where it leads cannot be known,
        // so the Disabled glob applies as the strictest rule it could fall under.
        expect(op.state).toBe('denied');
        expect(op.reason).toMatch(/could not be read \(ENAMETOOLONG\); the strictest rule it could fall under applies/);
      }
    }
    const denied = await call(core, 'read_file', { path: 'a'.repeat(48) + 'c' });
    expect(denied.state).toBe('denied');
  });
});
