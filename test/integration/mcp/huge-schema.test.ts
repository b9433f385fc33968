/**
 * A server cannot freeze Warden's main process with a huge tool schema: a schema over the size
 * limit is refused when the tool is listed (in plain words, the tool never offered and every call
 * of it refused with that reason), and a schema just under the limit is compiled once, when it is
 * listed, never on the call path. Through the real core and a real spawned stdio server
 * (test/fixtures/servers/huge-schema.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { inputSchemaCompiles, MAX_TOOL_SCHEMA_BYTES } from '../../../electron/core/validation/schemas';
import type { ServerView } from '../../../shared/domain/servers';
import { stdioFixture } from './helpers';
import { MapKeychain } from '../chat/helpers';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

let core: WardenCore | undefined;
afterEach(async () => {
  await core?.close();
  core = undefined;
});

async function call(channel: string, request: unknown): Promise<unknown> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value;
}

/** A core (dialogs answered Approve) with the huge-schema server connected, its tools allowed. */
async function connectWithSchemaOf(bytes: number) {
  core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', servers: { secrets: new MapKeychain() }, gate: { prompter: { prompt: async () => 'approve' } }, connections: { reconnect: { maxAttempts: 0 } } });
  const def = stdioFixture('ignored', 'huge-schema');
  const added = (await call('servers:add', { definition: { name: 'Bulk', transport: 'stdio', command: def.command, args: def.args, env: [{ name: 'FIXTURE_SCHEMA_BYTES', value: String(bytes) }] }, accountLabel: 'Work' })) as ServerView;
  const serverId = added.definition.id;
  const accountId = added.accounts[0]!.id;
  await call('connections:connect', { serverId, accountId });
  await call('permissions:set-many', { changes: [{ scope: 'server', serverId, accountId, mode: 'allow' }] });
  return { serverId, accountId };
}

describe('a huge tool schema never freezes the main process', () => {
  it('a 4 MB input schema is refused at listing in plain words: never offered, every call refused with that reason', async () => {
    const { serverId, accountId } = await connectWithSchemaOf(4 * 1024 * 1024);
    const bulk = core!.connections.getTool(serverId, accountId, 'bulk')!;
    expect(bulk.unusable).toBe("its inputSchema is 4.0 MB, over Warden's limit of 128 KB for one tool's schema; ask the server's author for a smaller schema");
    expect(core!.connections.getTool(serverId, accountId, 'echo')!.unusable).toBeUndefined();
    const offered = (await call('tools:offered', { conversationId: null })) as { tools: Array<{ toolName: string }> };
    expect(offered.tools.map((t) => t.toolName)).toEqual(['echo']);
    const compiles = inputSchemaCompiles();
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const op = await core!.gate.gate.request({ source: 'user', serverId, accountId, toolName: 'bulk', arguments: { keep: 'x' } });
      expect(op.state).toBe('validation_failed');
      expect(op.reason).toContain('its inputSchema is 4.0 MB, over Warden');
      expect(performance.now() - started).toBeLessThan(500);
    }
    expect(inputSchemaCompiles()).toBe(compiles);
    const echo = await core!.gate.gate.request({ source: 'user', serverId, accountId, toolName: 'echo', arguments: { text: 'hi' } });
    expect(echo.state).toBe('succeeded');
  }, 60_000);

  it('a schema just under the limit is compiled once, when listed, and no call compiles it again', async () => {
    const before = inputSchemaCompiles();
    const { serverId, accountId } = await connectWithSchemaOf(MAX_TOOL_SCHEMA_BYTES - 4 * 1024);
    expect(core!.connections.getTool(serverId, accountId, 'bulk')!.unusable).toBeUndefined();
    // bulk compiled while being listed (echo's contract too, unless an earlier test already had it).
    expect(inputSchemaCompiles() - before).toBeGreaterThanOrEqual(1);
    expect(inputSchemaCompiles() - before).toBeLessThanOrEqual(2);
    const listed = inputSchemaCompiles();
    // Listed again (a new connection): the same contracts are not compiled again.
    await call('connections:disconnect', { serverId, accountId });
    await call('connections:connect', { serverId, accountId });
    expect(inputSchemaCompiles()).toBe(listed);
    for (let i = 0; i < 20; i++) {
      const op = await core!.gate.gate.request({ source: 'user', serverId, accountId, toolName: 'bulk', arguments: { keep: `call ${i}` } });
      expect(op.state).toBe('succeeded');
    }
    const bad = await core!.gate.gate.request({ source: 'user', serverId, accountId, toolName: 'bulk', arguments: { field_3: 'not the pattern' } });
    expect(bad.state).toBe('validation_failed');
    expect(inputSchemaCompiles()).toBe(listed);
  }, 60_000);
});
