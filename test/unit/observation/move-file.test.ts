/**
 * server-filesystem's move_file through the local-files observer: a move that happened as approved
 * is observed as done; one that left the source or wrote other bytes is observed different.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { observedOutcome } from '../../../shared/domain/observation';
import { createFileObserver } from '../../../electron/core/observe/file-observer';
import type { ObservedCall, ToolDescriptor } from '../../../electron/core/gate/ports';

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'warden-move-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function moveCall(): ObservedCall {
  const tool: ToolDescriptor = {
    serverId: 'files',
    accountId: 'default',
    name: 'move_file',
    inputSchema: { type: 'object', properties: { source: { type: 'string' }, destination: { type: 'string' } } },
    contractHash: 'c',
    endpointHash: 'e',
    serverKind: 'filesystem',
    workingFolder: dir,
  };
  return { operationId: 'op-move', serverId: 'files', accountId: 'default', toolName: 'move_file', args: { source: path.join(dir, 'a.txt'), destination: path.join(dir, 'b.txt') }, tool };
}

describe('observing a move', () => {
  it('a move done as approved: the source is gone and the destination holds its bytes', async () => {
    await writeFile(path.join(dir, 'a.txt'), 'the report');
    const watch = createFileObserver().watch(moveCall())!;
    await watch.before();
    await rename(path.join(dir, 'a.txt'), path.join(dir, 'b.txt'));
    const seen = await watch.after('succeeded');
    expect(seen.targets.map((t) => t.matches)).toEqual([true, true]);
    expect(observedOutcome('succeeded', seen)).toBe('done_and_observed');
  });

  it('a move that copied other bytes and left the source is observed different', async () => {
    await writeFile(path.join(dir, 'a.txt'), 'the report');
    const watch = createFileObserver().watch(moveCall())!;
    await watch.before();
    await writeFile(path.join(dir, 'b.txt'), 'something else');
    const seen = await watch.after('succeeded');
    expect(seen.targets.map((t) => t.matches)).toEqual([false, false]);
    expect(observedOutcome('succeeded', seen)).toBe('observed_different');
  });
});
