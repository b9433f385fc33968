/**
 * The app frame's status bar is a cache of main's state: it must hear about every change without
 * polling. These tests drive real domain changes through the contract and watch the pushed
 * `core:status-changed` events.
 */
import { describe, expect, it } from 'vitest';
import { createCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import type { CoreStatus } from '../../../shared/contract/core';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

describe('core status events', () => {
  it('adding a server pushes a status with the new server count, once per change', async () => {
    const core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', servers: {}, gate: { prompter: { prompt: async () => 'deny' } } });
    const seen: CoreStatus[] = [];
    core.events.subscribe((event, payload) => {
      if (event === 'core:status-changed') seen.push(payload as CoreStatus);
    });
    try {
      const added = await dispatch(core.handlers, 'servers:add', {
        definition: { name: 'Local tool', transport: 'stdio', command: 'node', args: ['server.js'], env: [] },
      });
      expect(added.ok, JSON.stringify(added)).toBe(true);
      await new Promise((r) => setTimeout(r, 10));
      expect(seen.length).toBeGreaterThanOrEqual(1);
      expect(seen.at(-1)!.servers.configured).toBe(1);
      // Consecutive pushes always differ: nothing is re-sent when nothing changed.
      for (let i = 1; i < seen.length; i++) expect(JSON.stringify(seen[i])).not.toBe(JSON.stringify(seen[i - 1]));
      expect(seen.at(-1)).toEqual(core.status());
    } finally {
      await core.close();
    }
  });
});
