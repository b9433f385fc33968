/**
 * Pure helpers of the views: the args box is split exactly as typed (what is shown is what runs),
 * the matrix search matches every word, and the Run form's starting arguments follow the schema.
 */
import { describe, expect, it } from 'vitest';
import type { MatrixRow } from '../../../shared/contract/permissions';
import { displayCommandLine } from '../../../shared/domain/servers';
import { filterMatrix, parseArgs } from '../../../renderer/src/views/view-helpers';

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
