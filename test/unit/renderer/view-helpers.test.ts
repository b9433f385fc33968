/**
 * Pure helpers of the views: the args box is split exactly as typed (what is shown is what runs),
 * the matrix search matches every word, and the Run form's starting arguments follow the schema.
 */
import { describe, expect, it } from 'vitest';
import type { MatrixRow } from '../../../shared/contract/permissions';
import { displayCommandLine } from '../../../shared/domain/servers';
import { filterMatrix, groupMatrix, parseArgs } from '../../../renderer/src/views/view-helpers';

const row = (over: Partial<MatrixRow>): MatrixRow => ({
  serverId: 's',
  accountId: 'a',
  toolName: 't',
  serverLabel: 'S',
  accountLabel: 'A',
  serverDescription: null,
  serverAnnotations: null,
  mode: null,
  ruleId: null,
  effective: 'ask',
  explanation: '',
  layer: 'default',
  pin: 'none',
  orgLocked: false,
  contractHash: 'h',
  ...over,
});

describe('view helpers', () => {
  it('arguments are one per line, never trimmed or shell-split, so the preview is exactly what runs', () => {
    expect(parseArgs('')).toEqual([]);
    expect(parseArgs('--flag\n  two words \n\n$(rm -rf ~)')).toEqual(['--flag', '  two words ', '', '$(rm -rf ~)']);
    expect(displayCommandLine('node', parseArgs('a b\n$(x)'))).toBe("node 'a b' '$(x)'");
  });

  it('the matrix search needs every word to match server, account, tool or description', () => {
    const rows = [
      row({ toolName: 'close_issue', serverLabel: 'GitHub', accountLabel: 'Work' }),
      row({ toolName: 'read_file', serverLabel: 'Files', serverDescription: 'Reads a file from disk' }),
    ];
    expect(filterMatrix(rows, '').length).toBe(2);
    expect(filterMatrix(rows, 'github work').map((r) => r.toolName)).toEqual(['close_issue']);
    expect(filterMatrix(rows, 'DISK').map((r) => r.toolName)).toEqual(['read_file']);
    expect(filterMatrix(rows, 'github disk')).toEqual([]);
  });
});

describe('groupMatrix (the Permissions view’s rows)', () => {
  const row = (serverId: string, accountId: string, toolName: string) =>
    ({ serverId, accountId, toolName, serverLabel: serverId.toUpperCase(), accountLabel: accountId, serverDescription: null, serverAnnotations: null, mode: null, ruleId: null, effective: 'ask', explanation: '', layer: 'default', pin: 'none', orgLocked: false, contractHash: 'h' }) as const;
  const account = (accountId: string, label: string) => ({ accountId, label, active: false, connection: 'disconnected' as const, toolsFrom: 'none' as const, listedAt: null, toolCount: 0, mode: null, ruleId: null, explanation: '' });
  const servers = [{ serverId: 'w', label: 'Weather', location: 'A program on this computer', mode: null, ruleId: null, explanation: '', orgLock: null, accounts: [account('work', 'Work'), account('personal', 'Personal')] }];

  it('lists server → account → tool, with an account that has no tools shown as such', () => {
    const items = groupMatrix([row('w', 'work', 'a'), row('w', 'work', 'b')], servers, new Set());
    expect(items.map((i) => `${i.kind}:${i.key}`)).toEqual(['server:w', 'account:w/work', 'tool:w/work/a', 'tool:w/work/b', 'account:w/personal', 'no-tools:w/personal/-']);
  });

  it('a collapsed server or account shows its header only; a search lists only groups with a match', () => {
    expect(groupMatrix([row('w', 'work', 'a')], servers, new Set(['w'])).map((i) => i.key)).toEqual(['w']);
    expect(groupMatrix([row('w', 'work', 'a')], servers, new Set(['w/work'])).map((i) => i.key)).toEqual(['w', 'w/work', 'w/personal', 'w/personal/-']);
    expect(groupMatrix([row('w', 'work', 'a')], servers, new Set(), true).map((i) => i.key)).toEqual(['w', 'w/work', 'w/work/a']);
  });
});
