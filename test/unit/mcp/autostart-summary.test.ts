/**
 * The Servers summary line in words: what it says for each mix of states (the integration tests
 * in test/integration/core/autostart.test.ts check it against real servers).
 */
import { describe, expect, it } from 'vitest';
import { summarize } from '../../../electron/core/mcp/autostart';
import type { ServerOverviewRow } from '../../../shared/contract/servers';

const row = (name: string, state: ServerOverviewRow['state'], extra: Partial<ServerOverviewRow> = {}): ServerOverviewRow => ({
  serverId: name.toLowerCase(),
  name,
  transport: 'stdio',
  enabled: state !== 'turned_off',
  state,
  toolCount: 0,
  accountId: `${name.toLowerCase()}-default`,
  accountLabel: 'Default',
  reason: null,
  failure: null,
  notRetrying: false,
  attempt: null,
  nextAttemptAt: null,
  connectingSince: null,
  accounts: [],
  ...extra,
});

describe('the servers summary line', () => {
  it('names each server that is not connected and whether Warden retries it, not why (its row says that), and counts only servers that are on', () => {
    const rows = [
      row('Notes', 'connected'),
      row('Files', 'failed', { reason: 'Could not start uvx: command not found: uvx', failure: { kind: 'command-not-found', command: 'uvx' }, notRetrying: true }),
      row('Docs', 'failed', { reason: 'connect timed out after 30000 ms; gave up after 6 reconnect attempts', attempt: 7 }),
      row('GitHub', 'needs_sign_in', { reason: 'sign in to connect' }),
      row('Jira', 'retrying', { reason: 'cannot reach https://jira.example: fetch failed' }),
      row('Slow', 'connecting'),
      row('Old', 'turned_off'),
    ];
    expect(summarize(rows)).toEqual({
      total: 7,
      enabled: 6,
      connected: 1,
      text: '1 of 6 connected — Files failed, not retrying; Docs failed; GitHub needs you to sign in; Jira failed, retrying; Slow connecting (1 turned off)',
    });
  });

  it('says when there is nothing to connect', () => {
    expect(summarize([]).text).toBe('No servers yet');
    expect(summarize([row('A', 'turned_off'), row('B', 'turned_off')]).text).toBe('All 2 servers are turned off');
    expect(summarize([row('A', 'connected'), row('B', 'connected')]).text).toBe('2 of 2 connected');
  });
});
