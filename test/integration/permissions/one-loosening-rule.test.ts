/**
 * One rule decides what loosens, and every channel that changes rules asks it: a compromised
 * renderer that calls whichever channel used to judge more laxly still meets Warden's native
 * confirmation, and nothing changes when the person does not confirm. Through the real core, a
 * real spawned stdio server and the native-dialog stand-in.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import type { ApprovalPreview } from '../../../electron/core/ports';
import type { ServerView } from '../../../shared/domain/servers';
import { stdioFixture } from '../mcp/helpers';
import { MapKeychain } from '../chat/helpers';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

let core: WardenCore | undefined;
afterEach(async () => {
  await core?.close();
  core = undefined;
});

const shown: ApprovalPreview[] = [];

/** A core whose native dialog is answered "deny" (the person never confirms), with one connected server. */
async function coreWithServer() {
  shown.length = 0;
  core = createCore({
    confirmServerChange: confirmEveryServerChange,
    version: 'test',
    servers: { secrets: new MapKeychain() },
    gate: { prompter: { prompt: async (p) => (shown.push(p), 'deny') } },
    connections: { reconnect: { maxAttempts: 0 } },
  });
  const def = stdioFixture('ignored', 'rug-pull');
  const added = await dispatch(core.handlers, 'servers:add', { definition: { name: 'Weather', transport: 'stdio', command: def.command, args: def.args, env: [] }, accountLabel: 'Work' });
  if (!added.ok) throw new Error(added.error.message);
  const view = added.value as ServerView;
  const serverId = view.definition.id;
  const accountId = view.accounts[0]!.id;
  const connected = await dispatch(core.handlers, 'connections:connect', { serverId, accountId });
  if (!connected.ok) throw new Error(connected.error.message);
  return { serverId, accountId };
}

const effectiveOf = async (serverId: string) => {
  const m = await dispatch(core!.handlers, 'permissions:matrix', {});
  if (!m.ok) throw new Error(m.error.message);
  return (m.value as { rows: Array<{ serverId: string; effective: string }> }).rows.filter((r) => r.serverId === serverId).map((r) => r.effective);
};

describe('every channel that changes rules asks one loosening rule', () => {
  it.each(['permissions:set', 'permissions:set-many'] as const)(
    'with Settings set to Disabled for tools no rule covers, an Ask rule for a server sent on %s is confirmed first and not applied when refused',
    async (channel) => {
      const { serverId } = await coreWithServer();
      const disabled = await dispatch(core!.handlers, 'settings:set', { defaultToolMode: 'disabled' });
      expect(disabled.ok).toBe(true);
      expect(new Set(await effectiveOf(serverId))).toEqual(new Set(['deny']));
      const change = { scope: 'server', serverId, accountId: null, mode: 'ask' };
      const result = await dispatch(core!.handlers, channel, channel === 'permissions:set' ? change : { changes: [change] });
      expect(shown.map((p) => p.title)).toHaveLength(1);
      expect(result).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
      expect(new Set(await effectiveOf(serverId))).toEqual(new Set(['deny']));
      expect(core!.gate.policy.current().user).toEqual([]);
    },
  );

  it.each(['permissions:set', 'permissions:set-many'] as const)('an Ask rule for every tool sent on %s is confirmed first (it covers every tool, so it would also lift a Disabled default set later)', async (channel) => {
    await coreWithServer();
    const change = { scope: 'global', mode: 'ask' };
    const result = await dispatch(core!.handlers, channel, channel === 'permissions:set' ? change : { changes: [change] });
    expect(shown).toHaveLength(1);
    expect(result).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    expect(core!.gate.policy.current().user).toEqual([]);
  });

  it('a Disabled rule is applied at once on either channel: it only tightens', async () => {
    const { serverId } = await coreWithServer();
    const change = { scope: 'server', serverId, accountId: null, mode: 'disabled' };
    expect(await dispatch(core!.handlers, 'permissions:set', change)).toMatchObject({ ok: true });
    expect(await dispatch(core!.handlers, 'permissions:set-many', { changes: [{ ...change, accountId: null }] })).toMatchObject({ ok: true });
    expect(shown).toHaveLength(0);
  });
});
