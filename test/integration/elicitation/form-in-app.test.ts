/**
 * Form elicitation as the app shows it: the real core (createCore) with real servers — the
 * published server-everything over stdio and Streamable HTTP, and a hostile server asking for
 * secrets (test/fixtures/servers/phishing-form.ts) — driven through the `elicitation:*` contract
 * with dispatch, exactly as the window does. No native dialog answers a form: the person does,
 * in the app, and an answer only ever answers the server that asked.
 */
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';
import { dispatch } from '../../../electron/core/dispatch';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import type { ChannelName } from '../../../shared/ipc';
import type { ServerView } from '../../../shared/domain/servers';
import type { ElicitationQuestion, RefusedFormView } from '../../../shared/contract/elicitation';
import { freePort, MapSecretStore, ROOT, startHttpFixture, startHttpProcess, stdioFixture, waitUntil, type StartedHttpServer } from '../mcp/helpers';

const EVERYTHING = resolve(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

class ListableMapSecretStore extends MapSecretStore {
  async keys(prefix: string): Promise<string[]> {
    return [...this.values.keys()].filter((k) => k.startsWith(prefix));
  }
}

let core: WardenCore | undefined;
let servers: StartedHttpServer[] = [];
afterEach(async () => {
  await core?.close();
  core = undefined;
  await Promise.all(servers.map((s) => s.stop()));
  servers = [];
});

/** A core whose native approval dialog approves (a person pressing Approve), with its contract calls. */
function startCore() {
  const sent: Array<{ event: string; payload: unknown }> = [];
  core = createCore({ confirmServerChange: confirmEveryServerChange,
    version: 'test',
    journal: new MemoryJournal(systemClock),
    servers: { secrets: new ListableMapSecretStore() },
    gate: { prompter: { prompt: async () => 'approve' } },
    connections: { reconnect: { maxAttempts: 0 } },
  });
  core.events.subscribe((event, payload) => sent.push({ event, payload }));
  const raw = (channel: ChannelName, request: unknown) => dispatch(core!.handlers, channel, request);
  const call = async <T,>(channel: ChannelName, request: unknown): Promise<T> => {
    const r = await raw(channel, request);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.value as T;
  };
  return { core, sent, call, raw };
}

type Drafts = { name: string; transport: 'stdio'; command: string; args: string[]; env: [] } | { name: string; transport: 'http'; url: string };

/** Adds and connects the server, with Always Allow for `allowed` (the gate is not under test here). */
async function addAndConnect(call: ReturnType<typeof startCore>['call'], draft: Drafts, accountLabel: string, allowed: string[]): Promise<{ serverId: string; accountId: string }> {
  const added = await call<ServerView>('servers:add', { definition: draft, accountLabel });
  const serverId = added.definition.id;
  const accountId = added.accounts[0]!.id;
  const view = await call<{ status: { state: string } }>('connections:connect', { serverId, accountId });
  expect(view.status.state).toBe('connected');
  for (const toolName of allowed) await call('permissions:set', { scope: 'tool', serverId, accountId, toolName, mode: 'allow' });
  return { serverId, accountId };
}

async function everythingDraft(transport: 'stdio' | 'http'): Promise<Drafts> {
  if (transport === 'stdio') return { name: 'Everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] };
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      const started = await startHttpProcess(process.execPath, [EVERYTHING, 'streamableHttp'], {
        env: { PORT: String(port) },
        urlFrom: (_out, err) => (err.includes(`listening on port ${port}`) ? `http://127.0.0.1:${port}/mcp` : undefined),
      });
      servers.push(started);
      return { name: 'Everything', transport: 'http', url: started.url };
    } catch (error) {
      if (attempt >= 3) throw error; // the port was taken between probing and listening
    }
  }
}

async function phishingDraft(transport: 'stdio' | 'http'): Promise<Drafts> {
  if (transport === 'stdio') {
    const def = stdioFixture('ignored', 'phishing-form');
    return { name: 'Notes helper', transport: 'stdio', command: def.command, args: def.args, env: [] };
  }
  const started = await startHttpFixture('phishing-form', '--http');
  servers.push(started);
  return { name: 'Notes helper', transport: 'http', url: started.url };
}

async function pendingQuestion(call: ReturnType<typeof startCore>['call']): Promise<ElicitationQuestion> {
  return waitUntil(async () => (await call<{ questions: ElicitationQuestion[] }>('elicitation:list', {})).questions[0], 30_000, 'a question to be waiting');
}

describe.each(['stdio', 'http'] as const)('form elicitation over %s', (transport) => {
  it("server-everything's form is shown in the app labelled with Warden's names for the server and account, and the person's answer reaches the server", async () => {
    const { call, sent } = startCore();
    const key = await addAndConnect(call, await everythingDraft(transport), 'Work', ['trigger-elicitation-request']);
    const running = core!.gate.gate.request({ source: 'user', ...key, toolName: 'trigger-elicitation-request', arguments: {} });
    const question = await pendingQuestion(call);
    expect(question).toMatchObject({ serverLabel: 'Everything', accountLabel: 'Work', message: 'Please provide inputs for the following fields:' });
    expect(question.schema).toMatchObject({ type: 'object', required: ['name'], properties: { name: { type: 'string' }, email: { format: 'email' } } });
    expect(sent.some((e) => e.event === 'elicitation:changed' && (e.payload as { questions: number }).questions === 1)).toBe(true);

    await call('elicitation:answer', { questionId: question.questionId, action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' } });
    const op = await running;
    expect(op.state).toBe('succeeded');
    const text = JSON.stringify(op.result);
    expect(text).toContain('- Name: Ada Lovelace');
    expect(text).toContain('- Email: ada@example.com');
    // Defaults the person left alone were filled in from the schema before the answer left.
    expect(text).toContain('- Favorite Integer: 42');
    expect((await call<{ questions: unknown[] }>('elicitation:list', {})).questions).toEqual([]);
  });

  it('decline and cancel reach the server as such, and a question whose request the server withdrew can no longer be answered', async () => {
    const { call, raw } = startCore();
    const key = await addAndConnect(call, await everythingDraft(transport), 'Work', ['trigger-elicitation-request']);
    for (const action of ['decline', 'cancel'] as const) {
      const running = core!.gate.gate.request({ source: 'user', ...key, toolName: 'trigger-elicitation-request', arguments: {} });
      const question = await pendingQuestion(call);
      await call('elicitation:answer', { questionId: question.questionId, action });
      const op = await running;
      expect(JSON.stringify(op.result)).toContain(action === 'decline' ? 'User declined' : 'User cancelled');
      const again = await raw('elicitation:answer', { questionId: question.questionId, action: 'accept', content: { name: 'x' } });
      expect(again).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    }
  });

  it('a form asking for a password or a token is refused before the person sees it, the person is warned, and the server is told why', async () => {
    const { call } = startCore();
    const key = await addAndConnect(call, await phishingDraft(transport), 'Personal', ['sign_in', 'api_setup']);
    const signIn = await core!.gate.gate.request({ source: 'user', ...key, toolName: 'sign_in', arguments: {} });
    expect(JSON.stringify(signIn.result)).toContain('Warden refused the form: field \\"password\\": its name asks for a secret');
    const token = await core!.gate.gate.request({ source: 'user', ...key, toolName: 'api_setup', arguments: {} });
    expect(JSON.stringify(token.result)).toContain('asks for a secret');
    const { questions, refused } = await call<{ questions: unknown[]; refused: RefusedFormView[] }>('elicitation:list', {});
    expect(questions).toEqual([]);
    expect(refused.map((r) => [r.serverLabel, r.accountLabel, r.field])).toEqual([
      ['Notes helper', 'Personal', 'password'],
      ['Notes helper', 'Personal', 'config'],
    ]);
    expect(refused[0]!.why).toBe('its name asks for a secret (“password”)');
    expect(refused[1]!.why).toBe('its description asks for a secret (“token”)');
    expect(refused[0]!.message).toBe('Your Warden session expired. Enter your Warden password to continue.');
    expect(await call('elicitation:dismiss', { noticeId: refused[0]!.noticeId })).toEqual({ dismissed: true });
    expect((await call<{ refused: unknown[] }>('elicitation:list', {})).refused).toHaveLength(1);
  });
});

describe('an elicitation answer is never an approval', () => {
  it('a compromised window answering with a pending approval\'s id, or accepting a form while a call awaits approval, approves nothing', async () => {
    const { call, raw } = startCore();
    const key = await addAndConnect(call, await phishingDraft('stdio'), 'Personal', ['ask_name']);
    // A call the model asked for, waiting for the person's approval in the native dialog.
    const held = await core!.gate.gate.submit({ source: 'model', ...key, toolName: 'sign_in', arguments: {} });
    expect(held.state).toBe('awaiting_approval');
    // The window makes up an answer naming the pending operation.
    const forged = await raw('elicitation:answer', { questionId: held.operationId, action: 'accept', content: { approved: true } });
    expect(forged).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    // A real question, accepted, while the approval is still pending.
    const asking = core!.gate.gate.request({ source: 'user', ...key, toolName: 'ask_name', arguments: {} });
    const question = await pendingQuestion(call);
    await call('elicitation:answer', { questionId: question.questionId, action: 'accept', content: { name: 'Ada' } });
    expect(JSON.stringify((await asking).result)).toContain('{\\"action\\":\\"accept\\",\\"content\\":{\\"name\\":\\"Ada\\"}}');
    expect(core!.gate.gate.getLive(held.operationId)!.state).toBe('awaiting_approval');
    expect(core!.gate.gate.pending().map((o) => o.operationId)).toContain(held.operationId);
  });
});
