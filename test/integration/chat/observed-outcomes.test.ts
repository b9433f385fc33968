/**
 * Claimed versus observed, through the real core: a model on the loopback OpenAI-compatible
 * provider asks a hostile file server (spawned over stdio, configured where server-filesystem
 * lives) to write a file; the person approves; the server answers "Done." whatever it did. Warden
 * reads the file itself before and after, and each case ends in the right one of the four
 * outcomes in the ledger (read back through the ledger's own history, and again after its index
 * is rebuilt) and in what the model is told.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerForApp } from '../../../electron/core/ledger';
import type { Conversation } from '../../../shared/contract/chat';
import { startOpenAIFixture, type ModelFixture } from '../../fixtures/models';
import { ROOT, TSX_LOADER } from '../mcp/helpers';
import { createCore } from '../../../electron/core/app-core';
import { observedOutcome } from '../../../shared/domain/observation';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';
import { call, callsOf, DialogStandIn, MapKeychain, settled, startChatCore, waitingApproval, type ChatCore } from './helpers';
import { offeredName, ScriptedModel, withScripted } from './scripted-model';

const KEY = 'sk-observe-fixture-0123456789';
let t: ChatCore;
let fixture: ModelFixture;
let dir: string;
let ledgerDir: string;
let modeFile: string;
let providerId = '';
let closed = false;
let ledger: Awaited<ReturnType<typeof openLedgerForApp>>['ledger'];
/** The call the model makes next (the loopback model answers "Done." once it has a tool result). */
let nextCall: { path: string; content: string } = { path: '', content: '' };

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'warden-observe-')));
  ledgerDir = path.join(dir, 'ledger');
  modeFile = path.join(dir, 'mode');
  ({ ledger } = await openLedgerForApp(ledgerDir));
  fixture = await startOpenAIFixture({
    apiKey: KEY,
    models: [{ id: 'fixture-model' }],
    respond: (request) => {
      const body = request.body as { messages: Array<{ role: string }>; tools?: Array<{ function: { name: string } }> };
      if (body.messages.at(-1)?.role === 'tool') return { kind: 'reply', text: ['Done.'] };
      const name = body.tools!.map((x) => x.function.name).find((n) => n.endsWith('__write_file'))!;
      return { kind: 'reply', text: ['Writing it.'], toolCalls: [{ name, argumentsJson: JSON.stringify(nextCall) }] };
    },
  });
  t = await startChatCore({ ledger, connections: { reconnect: { maxAttempts: 0 }, defaultCallTimeoutMs: 1_500 } });
  const added = await call<{ definition: { id: string } }>(t.core, 'servers:add', {
    definition: {
      name: 'Files',
      transport: 'stdio',
      command: process.execPath,
      args: ['--import', TSX_LOADER, path.join(ROOT, 'test/fixtures/servers/mcp-server-filesystem/hostile-files.ts')],
      env: [{ name: 'FILES_MODE_FILE', value: modeFile }],
    },
  });
  const accountId = (await call<{ accounts: Array<{ id: string }> }>(t.core, 'accounts:list', { serverId: added.definition.id })).accounts[0]!.id;
  expect((await call<{ status: { state: string } }>(t.core, 'connections:connect', { serverId: added.definition.id, accountId })).status.state).toBe('connected');
  ({ provider: { providerId } } = await call<{ provider: { providerId: string } }>(t.core, 'models:add-provider', { kind: 'openai', label: 'Loopback', baseUrl: fixture.baseUrl, apiKey: KEY }));
}, 60_000);

afterAll(async () => {
  if (!closed) {
    await t?.core.close();
    await ledger?.close();
  }
  await fixture?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder holding `a.txt` ("old"), the server told how to behave, and one approved write of `content` to `target`. */
async function writeThrough(mode: string, options: { content?: string; target?: (folder: string) => string } = {}) {
  const folder = path.join(dir, mode);
  mkdirSync(folder);
  writeFileSync(path.join(folder, 'a.txt'), 'old');
  writeFileSync(modeFile, mode);
  const target = options.target?.(folder) ?? path.join(folder, 'a.txt');
  const content = options.content ?? `approved content for ${mode}`;
  nextCall = { path: target, content };
  const c = await call<Conversation>(t.core, 'chat:create', { providerId, model: 'fixture-model' });
  const before = fixture.completions().length;
  await call(t.core, 'chat:send-message', { conversationId: c.id, text: `write ${mode}` });
  const waiting = await waitingApproval(t.core, c.id);
  t.dialogs.single = 'approve';
  await call(t.core, 'chat:review', { conversationId: c.id, messageId: waiting.messages.find((m) => m.toolCalls.length)!.id });
  const done = await settled(t.core, c.id);
  const card = callsOf(done)[0]!;
  const recorded = (await ledger.history.operation(card.operationId!))!;
  // What the model was told: the tool result of the request after the call.
  const toolMessage = (fixture.completions()[before + 1]!.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'tool')!;
  return { folder, target, content, card, recorded, toldModel: toolMessage.content, lastWords: done.messages.at(-1)!.text };
}

describe('what a call really did, observed by Warden itself', () => {
  it('an honest write is done and observed: the file holds exactly the approved bytes, and the folder was checked', async () => {
    const r = await writeThrough('honest');
    expect(readFileSync(r.target, 'utf8')).toBe(r.content);
    expect(r.recorded.state).toBe('succeeded');
    expect(r.recorded.observedOutcome).toBe('done_and_observed');
    expect(r.recorded.observation).toMatchObject({ observer: 'local-files', foldersChecked: true, otherChanges: [] });
    expect(r.recorded.observation!.targets[0]).toMatchObject({ path: r.target, matches: true, changed: true, retargeted: false, before: { exists: true, size: 3 }, after: { exists: true, type: 'file', size: r.content.length } });
    expect(r.toldModel).toContain('Outcome as Warden recorded it: done and observed.');
    expect(r.toldModel).toContain('holds exactly the approved content');
    expect(r.toldModel).toContain('Nothing else in the folder changed.');
    // The server's own sentence is still there, marked as the server's.
    expect(r.toldModel).toMatch(/<tool_output untrusted="true"[^>]*>[\s\S]*Done\./);
  });

  it('a server that says "Done." and writes nothing is observed different, and the model is told so', async () => {
    const r = await writeThrough('nothing');
    expect(readFileSync(r.target, 'utf8')).toBe('old');
    expect(r.recorded.state).toBe('succeeded');
    expect(r.recorded.observedOutcome).toBe('observed_different');
    expect(r.recorded.observation!.targets[0]).toMatchObject({ matches: false, changed: false });
    expect(r.toldModel).toContain('Outcome as Warden recorded it: observed different.');
    expect(r.toldModel).toContain('is unchanged: it does not hold the approved content');
    expect(r.toldModel).toContain('do not tell the user it was done as asked');
  });

  it('a server that writes other bytes than approved is observed different', async () => {
    const r = await writeThrough('different');
    expect(readFileSync(r.target, 'utf8')).not.toBe(r.content);
    expect(r.recorded.observedOutcome).toBe('observed_different');
    expect(r.recorded.observation!.targets[0]).toMatchObject({ matches: false, changed: true });
    expect(r.toldModel).toContain('does not hold the approved content');
  });

  it('a symlink swapped after approval, so the bytes went elsewhere, is observed different: where the path led before and after is recorded', async () => {
    const r = await writeThrough('swap', {
      target: (folder) => {
        symlinkSync(path.join(folder, 'a.txt'), path.join(folder, 'link.txt'));
        return path.join(folder, 'link.txt');
      },
    });
    expect(readFileSync(path.join(r.folder, 'a.txt'), 'utf8')).toBe('old');
    expect(readFileSync(path.join(r.folder, 'elsewhere.txt'), 'utf8')).toBe(r.content);
    const target = r.recorded.observation!.targets[0]!;
    expect(target).toMatchObject({ retargeted: true, before: { type: 'symlink', resolved: path.join(r.folder, 'a.txt') }, after: { type: 'symlink', resolved: path.join(r.folder, 'elsewhere.txt') } });
    expect(r.recorded.observedOutcome).toBe('observed_different');
    expect(r.toldModel).toContain(`led to ${path.join(r.folder, 'a.txt')} before the call and to ${path.join(r.folder, 'elsewhere.txt')} after it`);
  });

  it('a server that writes the approved file and another one beside it is observed different: the folder was checked, so the other file is named', async () => {
    const r = await writeThrough('extra');
    expect(readFileSync(r.target, 'utf8')).toBe(r.content);
    expect(existsSync(path.join(r.folder, 'extra.txt'))).toBe(true);
    expect(r.recorded.observation!.targets[0]!.matches).toBe(true);
    expect(r.recorded.observation!.otherChanges).toEqual([path.join(r.folder, 'extra.txt')]);
    expect(r.recorded.observedOutcome).toBe('observed_different');
    expect(r.toldModel).toContain(`Other entries of the folder changed while the call ran: ${path.join(r.folder, 'extra.txt')}`);
  });

  it('a server that writes and then never answers stays outcome unknown, and the model is told what Warden saw on disk', async () => {
    const r = await writeThrough('timeout');
    expect(readFileSync(r.target, 'utf8')).toBe(r.content);
    expect(r.recorded.state).toBe('outcome_unknown');
    expect(r.recorded.observedOutcome).toBe('outcome_unknown');
    expect(r.recorded.observation!.targets[0]).toMatchObject({ matches: true, changed: true });
    expect(r.toldModel).toContain('Outcome as Warden recorded it: outcome unknown.');
    expect(r.toldModel).toContain('The server never answered.');
    expect(r.toldModel).toContain('holds exactly the approved content');
  });

  it('the observations survive a rebuilt index and a full verification of the ledger, and never change the request or the approval', async () => {
    const ops = await ledger.history.operations({ limit: 50 });
    const observed = ops.filter((o) => o.observation);
    expect(observed.length).toBeGreaterThanOrEqual(6);
    const histories = await Promise.all(observed.map((o) => ledger.history.history(o.operationId)));
    for (const h of histories) {
      expect(h!.approval?.by).toBe('you');
      expect(h!.events.at(-1)!.type).toBe('op.observation');
    }
    await t.core.close();
    await ledger.close();
    closed = true;
    rmSync(path.join(ledgerDir, 'ledger', 'index.sqlite'), { force: true });
    const reopened = await openLedgerForApp(ledgerDir);
    try {
      await reopened.ledger.whenIndexed();
      expect((await reopened.ledger.verify()).breaks).toBe(0);
      for (const o of observed) {
        const again = await reopened.ledger.history.operation(o.operationId);
        expect([again!.state, again!.observedOutcome, again!.observation]).toEqual([o.state, o.observedOutcome, o.observation]);
      }
    } finally {
      await reopened.ledger.close();
    }
  });
});

describe("the built-in demo, observed in its own notes store", () => {
  it('a note the person approved is done and observed: Warden read the new note from the store, not the demo\'s answer', async () => {
    const dialogs = new DialogStandIn();
    dialogs.single = 'approve';
    const model = new ScriptedModel((r) => (r.messages.at(-1)?.role === 'tool' ? { text: 'Saved.' } : { calls: [{ name: offeredName(r, 'notes_add')!, args: { text: 'call the dentist' } }] }));
    const core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: 'test',
      offerDemoServer: true,
      servers: { secrets: new MapKeychain() },
      gate: { prompter: dialogs.prompter },
      chat: { providers: withScripted(model) },
      connections: { reconnect: { maxAttempts: 0 } },
    });
    try {
      await core.demoOffered;
      const c = await call<Conversation>(core, 'chat:create', { providerId: 'scripted', model: 'scripted' });
      await call(core, 'chat:send-message', { conversationId: c.id, text: 'note it' });
      const waiting = await waitingApproval(core, c.id);
      await call(core, 'chat:review', { conversationId: c.id, messageId: waiting.messages.find((m) => m.toolCalls.length)!.id });
      const done = await settled(core, c.id);
      const card = callsOf(done)[0]!;
      const op = (await core.gate.gate.get(card.operationId!))!;
      expect(op.state).toBe('succeeded');
      expect(op.observation).toMatchObject({ observer: 'demo-notes', otherChanges: [], targets: [{ matches: true, changed: true }] });
      expect(observedOutcome(op.state, op.observation)).toBe('done_and_observed');
      const told = model.requests.at(-1)!.messages.at(-1)!;
      expect(JSON.stringify(told)).toContain('Outcome as Warden recorded it: done and observed.');
      expect(JSON.stringify(told)).toContain('was added with exactly the approved text');
    } finally {
      await core.close();
    }
  });
});
