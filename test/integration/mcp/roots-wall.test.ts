/**
 * A server's folders as a wall, through the real core and @modelcontextprotocol/server-filesystem
 * as a spawned stdio process: with "keep this server inside its folders" on, a call whose path is
 * inside the account's folder runs on an Always Allow, and one outside (or through a symlink that
 * leads outside) is held at Ask with the reason in words, never sent. Turning the wall off needs
 * the person in the native dialog, whatever the window asks.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock, type ApprovalPreview } from '../../../electron/core/ports';
import type { ServerView } from '../../../shared/domain/servers';
import type { ChannelName } from '../../../shared/ipc';
import { scriptedFileDialogs } from '../../host/standin-file-dialogs';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';
import { MapSecretStore, ROOT, waitUntil } from './helpers';

class ListableMapSecretStore extends MapSecretStore {
  async keys(prefix: string): Promise<string[]> {
    return [...this.values.keys()].filter((k) => k.startsWith(prefix));
  }
}

const FILESYSTEM = resolve(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

let base: string;
let core: WardenCore | undefined;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'warden-wall-')));
});
afterEach(async () => {
  await core?.close();
  core = undefined;
  rmSync(base, { recursive: true, force: true });
});

async function setup() {
  const project = join(base, 'project');
  const outside = join(base, 'outside');
  mkdirSync(project);
  mkdirSync(outside);
  writeFileSync(join(project, 'notes.md'), 'inside the project');
  writeFileSync(join(outside, 'secret.txt'), 'outside the project');
  symlinkSync(outside, join(project, 'link'));

  const dialogs = scriptedFileDialogs();
  const prompter = { answer: 'approve' as 'approve' | 'deny', shown: [] as ApprovalPreview[] };
  const journal = new MemoryJournal(systemClock);
  core = createCore({
    confirmServerChange: confirmEveryServerChange,
    version: 'test',
    journal,
    servers: { secrets: new ListableMapSecretStore() },
    fileDialogs: dialogs,
    gate: {
      prompter: {
        prompt: async (p) => {
          prompter.shown.push(p);
          return prompter.answer;
        },
      },
    },
    connections: { reconnect: { maxAttempts: 0 } },
  });
  const c = core;
  const raw = (channel: ChannelName, request: unknown) => dispatch(c.handlers, channel, request);
  const call = async <T,>(channel: ChannelName, request: unknown): Promise<T> => {
    const r = await raw(channel, request);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.value as T;
  };
  // The server itself may open the whole temp folder: only Warden's wall keeps it in the project.
  const added = await call<ServerView>('servers:add', { definition: { name: 'Files', transport: 'stdio', command: process.execPath, args: [FILESYSTEM, base], env: [] }, accountLabel: 'Work' });
  const key = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
  await call('connections:connect', key);
  dialogs.choose(project);
  await call('roots:choose', key);
  await call('permissions:set', { scope: 'tool', ...key, toolName: 'read_text_file', mode: 'allow' });
  // A held call stays pending; anything else is followed until it ends.
  const read = async (path: string) => {
    const op = await c.gate.gate.submit({ source: 'user', ...key, toolName: 'read_text_file', arguments: { path } });
    if (op.state === 'awaiting_approval') return op;
    return waitUntil(async () => {
      const now = await c.gate.gate.get(op.operationId);
      return now && ['succeeded', 'failed', 'outcome_unknown', 'denied'].includes(now.state) ? now : undefined;
    }, 20_000, 'the call to end');
  };
  return { core: c, key, call, raw, read, prompter, journal, project, outside };
}

describe('roots as a wall (server-filesystem over stdio)', () => {
  it('inside the folder runs on Always Allow; outside, and through a symlink that leads outside, is held at Ask with the reason, never sent', { timeout: 60_000 }, async () => {
    const { key, call, read, project, outside, prompter } = await setup();
    // Off by default: the call outside the folder goes to the server (which opens the whole temp
    // folder here), decided by the Always Allow alone. This also leaves a decision in the gate's
    // cache for the tool, which turning the wall on must not reuse.
    expect((await call<{ enforced: boolean }>('roots:list', key)).enforced).toBe(false);
    const before = await read(join(outside, 'secret.txt'));
    expect(before.state).not.toBe('awaiting_approval');
    expect(before.decision?.decision).toBe('allow');

    // Turning it on only tightens: no dialog.
    const shown = prompter.shown.length;
    expect(await call('roots:enforce', { serverId: key.serverId, enforced: true })).toEqual({ enforced: true });
    expect(prompter.shown.length).toBe(shown);
    expect((await call<{ enforced: boolean }>('roots:list', key)).enforced).toBe(true);

    const inside = await read(join(project, 'notes.md'));
    expect(inside.state).toBe('succeeded');
    expect(JSON.stringify(inside.result)).toContain('inside the project');

    const held = await read(join(outside, 'secret.txt'));
    expect(held.state).toBe('awaiting_approval');
    expect(held.decision).toMatchObject({ decision: 'ask', layer: 'roots' });
    expect(held.decision?.reason).toBe(`Asks: arguments.path ${JSON.stringify(join(outside, 'secret.txt'))} is outside the folders you gave Files (Work) (${project}), and you chose to keep it inside them`);
    // The approval says it in words too.
    const approvals = await call<{ approvals: Array<{ preview: { detail: string } }> }>('approvals:list', {});
    expect(approvals.approvals.at(-1)!.preview.detail).toContain('is outside the folders you gave Files (Work)');

    const viaLink = await read(join(project, 'link', 'secret.txt'));
    expect(viaLink.state).toBe('awaiting_approval');
    expect(viaLink.decision?.reason).toContain(`(it leads to ${join(outside, 'secret.txt')})`);
    const dotted = await read(join(project, '..', 'outside', 'secret.txt'));
    expect(dotted.state).toBe('awaiting_approval');

    // The matrix shows the wall on the server and on a tool that takes a path.
    const matrix = await call<{ servers: Array<{ serverId: string; rootsEnforced?: boolean }>; rows: Array<{ toolName: string; rootsWall?: string | null }> }>('permissions:matrix', {});
    expect(matrix.servers.find((s) => s.serverId === key.serverId)?.rootsEnforced).toBe(true);
    expect(matrix.rows.find((r) => r.toolName === 'read_text_file')?.rootsWall).toBe('Calls with a path (path) outside Work’s folder ask first');
    // Text a tool takes besides its paths can hold one too, and is judged as one when it does.
    expect(matrix.rows.find((r) => r.toolName === 'write_file')?.rootsWall).toBe('Calls with a path (path, or in any other text) outside Work’s folder ask first');
    expect(matrix.rows.find((r) => r.toolName === 'list_allowed_directories')?.rootsWall).toBeNull();
  });

  it('the folders changing decides pending and later calls again: a removed folder holds the next call inside it', { timeout: 60_000 }, async () => {
    const { key, call, read, project } = await setup();
    await call('roots:enforce', { serverId: key.serverId, enforced: true });
    expect((await read(join(project, 'notes.md'))).state).toBe('succeeded');
    await call('roots:remove', { ...key, path: project });
    const held = await read(join(project, 'notes.md'));
    expect(held.state).toBe('awaiting_approval');
    expect(held.decision?.reason).toContain('you chose to keep Files (Work) inside its folders but gave it none');
  });

  it('from the attacker side: a window cannot turn the wall off without the person in the native dialog', { timeout: 60_000 }, async () => {
    const { key, call, raw, read, prompter, journal, outside } = await setup();
    await call('roots:enforce', { serverId: key.serverId, enforced: true });
    prompter.answer = 'deny';
    const shown = prompter.shown.length;
    const off = await raw('roots:enforce', { serverId: key.serverId, enforced: false });
    expect(off).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    expect(prompter.shown.length).toBe(shown + 1);
    expect(prompter.shown.at(-1)!.title).toBe('Stop keeping Files inside its folders?');
    expect((await call<{ enforced: boolean }>('roots:list', key)).enforced).toBe(true);
    expect((await read(join(outside, 'secret.txt'))).state).toBe('awaiting_approval');

    // Confirmed by the person: off, journaled with who changed it, and the call is decided by its rule.
    prompter.answer = 'approve';
    expect(await call('roots:enforce', { serverId: key.serverId, enforced: false })).toEqual({ enforced: false });
    const changes = journal.read().filter((r) => r.type === 'policy.changed' && (r.payload as { ruleId: string }).ruleId === `roots:${key.serverId}`);
    expect(changes.map((r) => (r.payload as { new: unknown; source: string }).new)).toEqual([{ enforceRoots: true }, { enforceRoots: false }]);
    expect((await read(join(outside, 'secret.txt'))).state).not.toBe('awaiting_approval');
    // A server that does not exist is refused in words.
    expect(await raw('roots:enforce', { serverId: 'nope', enforced: true })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });
});
