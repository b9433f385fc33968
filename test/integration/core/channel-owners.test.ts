/**
 * Every contract channel has exactly one handler, declared by one module: a channel two modules
 * declare would be answered by whichever was spread last, so a guarantee the other keeps (a
 * confirmation, a check) would hold on one path and silently not on the other.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { assembleHandlers } from '../../../electron/core/dispatch';
import { channelNames } from '../../../shared/ipc';
import { MapKeychain } from '../chat/helpers';

let core: WardenCore | undefined;
afterEach(async () => {
  await core?.close();
  core = undefined;
});

describe('one owner per contract channel', () => {
  it('the real core declares every contract channel exactly once, and permissions:matrix belongs to the permissions module', () => {
    core = createCore({ version: 'test', servers: { secrets: new MapKeychain() } });
    expect(Object.keys(core.handlerOwners).sort()).toEqual([...channelNames].sort());
    expect(Object.keys(core.handlers).sort()).toEqual([...channelNames].sort());
    expect(core.handlerOwners['permissions:matrix']).toBe('permissions');
    expect(core.handlerOwners['permissions:set-many']).toBe('permissions');
    expect(core.handlerOwners['permissions:set']).toBe('permissions');
    expect(core.handlerOwners['permissions:revoke']).toBe('permissions');
    expect(core.handlerOwners['approvals:review']).toBe('gate');
    expect(core.handlerOwners['operations:get']).toBe('gate');
  });

  it('a channel declared by two modules, or by none, stops the core from being assembled, naming it', () => {
    const all = Object.fromEntries(channelNames.map((c) => [c, () => undefined]));
    expect(() => assembleHandlers({ everything: all })).not.toThrow();
    expect(() => assembleHandlers({ everything: all, gate: { 'permissions:matrix': () => undefined } } as never)).toThrow(
      'Every contract channel needs exactly one handler; declared twice: permissions:matrix (by everything and gate)',
    );
    const { 'core:ping': _ping, ...withoutPing } = all;
    expect(() => assembleHandlers({ everything: withoutPing } as never)).toThrow('declared by no module: core:ping');
    expect(() => assembleHandlers({ everything: { ...all, 'core:reboot': () => undefined } } as never)).toThrow('not in the contract: core:reboot');
  });
});
